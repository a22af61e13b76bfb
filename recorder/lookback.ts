/**
 * Replay reads only a recent window of the corpus (FIRE: 1–4 h lookback), so
 * experiments see today's traffic mix rather than last month's.
 */
import type { CorpusRecord } from '../core/index.js';
import type { CorpusStore, ReadOptions } from '../store/index.js';

export interface CorpusWindowOptions extends ReadOptions {
  readonly tier: string;
  readonly lookbackMs: number;
  /** The present, epoch ms. */
  readonly nowMs: number;
  readonly limit?: number;
}

/** Records of `tier` no older than `lookbackMs` before `nowMs`, streamed. */
export function readCorpusWindow(store: CorpusStore, options: CorpusWindowOptions): AsyncIterable<CorpusRecord> {
  const { tier, lookbackMs, nowMs, limit, ...read } = options;
  return store.read(tier, { ...read, sinceMs: nowMs - lookbackMs, untilMs: nowMs + 1, ...(limit !== undefined ? { limit } : {}) });
}
