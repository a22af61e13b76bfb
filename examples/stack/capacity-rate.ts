/**
 * The capacity story's rate on this host. The story is that the feature
 * store is the bottleneck: its throughput is a set number of documents per
 * second, the same on every host, but ranking's load-factor is its CPU, and a
 * slower host's ranking costs more per request. On a host where a ranking
 * request cost about twice the CPU it costs on a fast one, ranking's
 * load-factor rose above the feature store's: the controller escalated on
 * ranking before the feature store was ever over 0.9, and ranking's
 * load-factor at 1× stayed above L1's recoverBelow, so the run ended in L1.
 * The rate is therefore chosen from ranking's load-factor measured at the
 * default rate, so that at 1× it is at most RANKING_LOAD_FACTOR: the feature
 * store is then the first service over any threshold on any host fast enough
 * for MIN_RATE.
 */
import type { CorpusRecord } from '../../core/model.js';
import type { Clock } from '../../core/clock.js';
import { metricTotal } from './metric-total.js';
import { pacedRecords, type PacedOptions } from './paced-records.js';
import { DEFAULT_TARGET_UTILIZATION } from './load-factor.js';

/** Ranking's load-factor at 1× that the rate is chosen for: 0.6 when the feature store reaches L1's 0.8 at 1.33×, well under L1's recoverBelow (0.7) at 1×. */
export const RANKING_LOAD_FACTOR = 0.45;
/** Below this the buckets hold too few requests to measure quality in. */
export const MIN_RATE = 6;
const WARM_UP_SECONDS = 1;
const MEASURED_SECONDS = 2;

/**
 * Ranking's load-factor at L0 when sent `rate` requests per second (open loop,
 * as the capacity test sends), after a warm-up: 3 s and 3 × rate requests.
 * It is the mean over the measured seconds (compute seconds over wall
 * seconds, over the target utilization), not a reading of the gauge, which
 * covers one second only. `sending`: headers for its requests and what to do with their answers.
 */
export async function rankingLoadFactorAt(
  rate: number,
  rankingUrl: string,
  records: readonly CorpusRecord[],
  clock: Clock,
  signal?: AbortSignal,
  sending?: PacedOptions,
): Promise<number> {
  const sender = pacedRecords(rankingUrl, records, clock, signal, sending);
  await sender.send(rate, WARM_UP_SECONDS);
  const before = await metricTotal(rankingUrl, 'compute_seconds_total');
  const started = clock.monotonic();
  await sender.send(rate, MEASURED_SECONDS);
  const after = await metricTotal(rankingUrl, 'compute_seconds_total');
  const seconds = (clock.monotonic() - started) / 1000;
  return (after - before) / seconds / DEFAULT_TARGET_UTILIZATION;
}

/** The baseline rate that gives ranking RANKING_LOAD_FACTOR, from its load-factor at `rate`: at most `rate`, at least MIN_RATE, whole requests per second. */
export function capacityRateFor(loadFactorAtRate: number, rate: number): number {
  if (!(loadFactorAtRate > 0)) return rate;
  return Math.max(MIN_RATE, Math.min(rate, Math.floor((rate * RANKING_LOAD_FACTOR) / loadFactorAtRate)));
}
