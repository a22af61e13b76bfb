/**
 * What a ranking request costs in CPU on this machine, read off the example stack's own ranking process. The
 * demo's trial rates were chosen where a request cost about 15 ms (replay-rate.ts); on a slower host the same
 * rates ask both arms for more than their one CPU: on the sixteenth host (a first-generation AMD EPYC at 2 GHz)
 * a request cost about three times as much, every trial achieved about half its pairs per second and was replaced
 * until the replacements ran out, and neither judged step decided.
 *
 * Two readings. While the demo records, at 50 requests a second through the whole stack (free: the recording runs
 * anyway). That one is an upper bound: on a host too slow for that traffic, requests in flight have cost CPU
 * before they are counted (it read 136 ms where a request cost about 45). So it is trusted only when it keeps the
 * rate; otherwise a probe sends recorded requests straight to ranking at a rate it can answer, and counts only
 * requests that were answered within its window.
 */
import type { Clock } from '../../core/clock.js';
import type { CorpusRecord } from '../../core/model.js';
import { processStats } from '../../replayer/index.js';
import { metricTotal, pacedRecords } from '../stack/index.js';

/** One reading of the ranking process: its CPU seconds so far and the ranking requests it has answered. */
export interface RankingReading {
  readonly cpuSeconds: number;
  readonly requests: number;
}

/**
 * CPU seconds per request between two readings, or undefined when too few requests were answered between them
 * to mean anything (fewer than `minRequests`) or a reading went backwards (another process).
 */
export function cpuSecondsPerRequestBetween(before: RankingReading, after: RankingReading, minRequests = 20): number | undefined {
  const requests = after.requests - before.requests;
  const cpuSeconds = after.cpuSeconds - before.cpuSeconds;
  if (!(requests >= minRequests) || !(cpuSeconds > 0)) return undefined;
  return cpuSeconds / requests;
}

/** Ranking's reading now: its process's CPU (/proc) and its answered `POST /rank` requests (its /metrics). */
export async function readRanking(rankingUrl: string, pid: number): Promise<RankingReading | undefined> {
  const [stats, requests] = await Promise.all([processStats(pid), metricTotal(rankingUrl, 'requests_total', { route: 'POST /rank' }).catch(() => undefined)]);
  return stats && requests !== undefined ? { cpuSeconds: stats.cpuSeconds, requests } : undefined;
}

export interface RequestCostOptions {
  readonly read: () => Promise<RankingReading | undefined>;
  readonly clock: Clock;
  /** Skipped first: in a fresh process's first seconds of traffic a request costs more than it will (compiling its hot code). */
  readonly warmUpMs: number;
  readonly windowMs: number;
  readonly signal?: AbortSignal;
}

/** CPU seconds per ranking request over a window that starts after the warm-up; undefined when it could not be read. */
export async function measureRequestCost(options: RequestCostOptions): Promise<number | undefined> {
  await options.clock.sleep(options.warmUpMs, options.signal);
  const before = await options.read();
  await options.clock.sleep(options.windowMs, options.signal);
  const after = await options.read();
  return before && after ? cpuSecondsPerRequestBetween(before, after) : undefined;
}

/**
 * The probe's requests a second, and its seconds: half a second that is not counted, then 40 requests counted.
 * Requests differ (heavy and light, 1–3 queries): 20 taken from the corpus's first records read 25.7 ms and
 * 40.1 ms on one host in two runs, so the probe takes twice as many, spread over the whole corpus (sampleOf).
 */
const PROBE_RATE = 20;
const PROBE_SETTLE_S = 0.5;
const PROBE_MEASURED_S = 2;
const PROBE_MIN_REQUESTS = 40;

/**
 * CPU seconds per request of ranking answering recorded requests sent straight to it (pacedRecords), with nothing
 * else sent to it: every request sent in the window is answered before the second reading.
 */
export async function probeRequestCost(options: {
  rankingUrl: string;
  pid: number;
  records: readonly CorpusRecord[];
  clock: Clock;
  signal?: AbortSignal;
}): Promise<number | undefined> {
  const sender = pacedRecords(options.rankingUrl, options.records, options.clock, options.signal);
  await sender.send(PROBE_RATE, PROBE_SETTLE_S);
  const before = await readRanking(options.rankingUrl, options.pid);
  await sender.send(PROBE_RATE, PROBE_MEASURED_S);
  const after = await readRanking(options.rankingUrl, options.pid);
  return before && after ? cpuSecondsPerRequestBetween(before, after, PROBE_MIN_REQUESTS) : undefined;
}

/** At most `size` records taken evenly across all of `records`, first to last, for a probe that sees the corpus's mix. */
export function sampleOf<T>(records: readonly T[], size: number): T[] {
  if (records.length <= size) return [...records];
  return Array.from({ length: size }, (_, i) => records[Math.floor((i * records.length) / size)]!);
}
