/**
 * Each arm's answers over the judged trials, from the store's aggregates
 * (outcomes are never loaded): counts, errors by class, mean latency and
 * bytes from sums, quantiles and the latency CDF from the merged sketch
 * (within 1% relative, core/latency-sketch.ts), min and max exact.
 */
import { LATENCY_SKETCH_RELATIVE_ERROR, mergeBuckets, sketchQuantile, sortedBuckets, type TrialRecord } from '../core/index.js';
import type { ReadOptions, Store } from '../store/index.js';

export interface ArmSummary {
  readonly requests: number;
  readonly errors: number;
  readonly errorsByClass: Readonly<Record<string, number>>;
  readonly latencyMs: { readonly mean: number; readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number };
  readonly bytesMean: number;
}

export type ArmName = 'control' | 'treatment';

/** Relative error bound of the summaries' latency quantiles and CDF points. */
export const SUMMARY_QUANTILE_ERROR = LATENCY_SKETCH_RELATIVE_ERROR;

export interface ArmDistributions {
  readonly arms: Readonly<Record<ArmName, ArmSummary>>;
  /** Latency quantiles per arm, [ms, quantile], 101 points each (none for an arm without answers). */
  readonly latencyCdf: Readonly<Record<ArmName, readonly (readonly [number, number])[]>>;
}

export async function armDistributions(store: Pick<Store, 'outcomes'>, experimentId: string, used: readonly TrialRecord[], options: ReadOptions = {}): Promise<ArmDistributions> {
  const attempts = new Map(used.map((t) => [t.index, t.attempt]));
  const merged = {
    control: { count: 0, latencySum: 0, min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY, bytes: 0, errors: {} as Record<string, number>, buckets: {} as Record<string, number> },
    treatment: { count: 0, latencySum: 0, min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY, bytes: 0, errors: {} as Record<string, number>, buckets: {} as Record<string, number> },
  };
  for (const a of await store.outcomes.aggregate(experimentId, options)) {
    // Outcomes of replaced attempts stay stored; only the attempt that completed counts.
    if (attempts.get(a.trial) !== a.attempt || (a.arm !== 'control' && a.arm !== 'treatment')) continue;
    const m = merged[a.arm];
    m.count += a.count;
    m.latencySum += a.latencySumMs;
    m.min = Math.min(m.min, a.latencyMinMs);
    m.max = Math.max(m.max, a.latencyMaxMs);
    m.bytes += a.bytesSum;
    mergeBuckets(m.errors, a.errors);
    mergeBuckets(m.buckets, a.latencyBuckets);
  }
  const summarize = (arm: ArmName): { summary: ArmSummary; cdf: [number, number][] } => {
    const m = merged[arm];
    const sorted = sortedBuckets(m.buckets);
    const q = (p: number): number => sketchQuantile(sorted, p, { min: m.min, max: m.max });
    const errors = Object.values(m.errors).reduce((a, b) => a + b, 0);
    return {
      summary: {
        requests: m.count,
        errors,
        errorsByClass: m.errors,
        latencyMs: { mean: m.count > 0 ? m.latencySum / m.count : Number.NaN, p50: q(0.5), p90: q(0.9), p99: q(0.99), max: m.count > 0 ? m.max : Number.NaN },
        bytesMean: m.count > 0 ? m.bytes / m.count : Number.NaN,
      },
      cdf: m.count > 0 ? Array.from({ length: 101 }, (_, i): [number, number] => [q(i / 100), i / 100]) : [],
    };
  };
  const control = summarize('control');
  const treatment = summarize('treatment');
  return { arms: { control: control.summary, treatment: treatment.summary }, latencyCdf: { control: control.cdf, treatment: treatment.cdf } };
}
