/**
 * "Production" traffic for the example stack: a seeded, realistic mix of
 * surfaces (heavy home feeds, medium video, light search), viewers, and a few
 * hot search queries (Zipf), sent open-loop at a fixed rate. Always bounded
 * in count and in time, and only ever sent to the URL given (127.0.0.1).
 */
import { Pool } from 'undici';
import { type Clock, systemClock } from '../../core/clock.js';
import { hashString, prng } from './model.js';
import type { RecommendRequest } from './query-service.js';

const VOCABULARY = Array.from({ length: 200 }, (_, i) => `q${i.toString(36)}`);

/** Zipf(s = 1.1) cumulative weights over the vocabulary: a few queries are hot. */
const ZIPF = (() => {
  const weights = VOCABULARY.map((_, rank) => 1 / (rank + 1) ** 1.1);
  const total = weights.reduce((a, b) => a + b, 0);
  let acc = 0;
  return weights.map((w) => (acc += w / total));
})();

/** The `index`-th request of the traffic seeded with `seed`: a pure function. */
export function productionRequest(index: number, seed = 1): RecommendRequest {
  const next = prng(hashString(`traffic:${seed}:${index}`));
  const pick = next();
  const viewer = Math.floor(next() * 10_000);
  if (pick < 0.5) return { surface: 'home', viewer, k: 20 };
  if (pick < 0.8) return { surface: 'video', viewer, k: 10 };
  const u = next();
  const rank = ZIPF.findIndex((c) => u <= c);
  return { surface: 'search', viewer, query: VOCABULARY[rank === -1 ? VOCABULARY.length - 1 : rank]!, k: 10 };
}

export interface TrafficOptions {
  /** Base URL of the query service. */
  readonly url: string;
  /** Requests per second. */
  readonly rate: number;
  /** Stop after this many requests. */
  readonly maxRequests: number;
  /** Stop after this long, whatever was sent. */
  readonly maxDurationMs: number;
  /** Stop sending once this says enough (asked before every send; answers in flight are still awaited). */
  readonly enough?: () => boolean;
  /** @default 1 */
  readonly seed?: number;
  /** In-flight cap; a send that would exceed it is dropped and counted. @default 64 */
  readonly concurrency?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
  readonly clock?: Clock;
}

export interface TrafficResult {
  readonly sent: number;
  readonly ok: number;
  readonly failed: number;
  /** Sends skipped because the in-flight cap was reached. */
  readonly dropped: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly durationMs: number;
}

export async function generateTraffic(options: TrafficOptions): Promise<TrafficResult> {
  if (!(options.rate > 0) || !Number.isFinite(options.rate)) throw new RangeError(`rate must be > 0, got ${options.rate}`);
  const clock = options.clock ?? systemClock;
  const pool = new Pool(options.url, { connections: Math.min(options.concurrency ?? 64, 32) });
  const statuses: Record<string, number> = {};
  const inflight = new Set<Promise<void>>();
  const start = clock.now();
  let sent = 0;
  let ok = 0;
  let failed = 0;
  let dropped = 0;
  const count = (key: string): void => {
    statuses[key] = (statuses[key] ?? 0) + 1;
  };
  try {
    for (let i = 0; i < options.maxRequests; i++) {
      if (options.signal?.aborted || options.enough?.()) break;
      const due = start + (i * 1000) / options.rate;
      if (due - start >= options.maxDurationMs) break;
      const wait = due - clock.now();
      if (wait > 0) await clock.sleep(wait, options.signal).catch(() => undefined);
      if (options.signal?.aborted || options.enough?.()) break;
      if (inflight.size >= (options.concurrency ?? 64)) {
        dropped++;
        continue;
      }
      sent++;
      const request = pool
        .request({
          path: '/recommend',
          method: 'POST',
          headers: { ...options.headers, 'content-type': 'application/json' },
          body: JSON.stringify(productionRequest(i, options.seed ?? 1)),
          ...(options.signal ? { signal: options.signal } : {}),
        })
        .then(async (response) => {
          await response.body.dump();
          count(String(response.statusCode));
          if (response.statusCode < 400) ok++;
          else failed++;
        })
        .catch((error: Error & { code?: string }) => {
          failed++;
          count(error.code ?? error.name);
        });
      inflight.add(request);
      void request.finally(() => inflight.delete(request));
    }
    await Promise.all(inflight);
  } finally {
    await pool.close();
  }
  return { sent, ok, failed, dropped, statuses, durationMs: clock.now() - start };
}
