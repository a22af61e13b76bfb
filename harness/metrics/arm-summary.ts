/**
 * Each arm's answers over the judged trials, from the store's aggregates
 * (outcomes are never loaded): counts, errors by class, mean latency and
 * bytes from sums, quantiles and the latency CDF from the merged sketch
 * (within 1% relative, core/latency-sketch.ts), min and max exact.
 */
import { LATENCY_SKETCH_RELATIVE_ERROR, sketchQuantile, sortedBuckets, type TrialRecord } from '../../core/index.js';
import { OutcomeAggregator, type ReadOptions, type Store } from '../../store/index.js';

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

export async function armDistributions(
  store: Pick<Store, 'outcomes'>,
  experimentId: string,
  used: readonly TrialRecord[],
  options: ReadOptions = {},
): Promise<ArmDistributions> {
  const attempts = new Map(used.map((t) => [t.index, t.attempt]));
  // The judged attempts' aggregates merged per arm (trial and attempt set aside: one group per arm).
  const merged = new OutcomeAggregator();
  for (const a of await store.outcomes.aggregate(experimentId, options)) {
    // Outcomes of replaced attempts stay stored; only the attempt that completed counts.
    if (attempts.get(a.trial) === a.attempt && (a.arm === 'control' || a.arm === 'treatment')) merged.merge({ ...a, trial: 0, attempt: 0 });
  }
  const byArm = new Map(merged.aggregates().map((a) => [a.arm, a]));
  const summarize = (arm: ArmName): { summary: ArmSummary; cdf: [number, number][] } => {
    const m = byArm.get(arm);
    if (!m)
      return {
        summary: {
          requests: 0,
          errors: 0,
          errorsByClass: {},
          latencyMs: { mean: Number.NaN, p50: Number.NaN, p90: Number.NaN, p99: Number.NaN, max: Number.NaN },
          bytesMean: Number.NaN,
        },
        cdf: [],
      };
    const sorted = sortedBuckets(m.latencyBuckets);
    const q = (p: number): number => sketchQuantile(sorted, p, { min: m.latencyMinMs, max: m.latencyMaxMs });
    return {
      summary: {
        requests: m.count,
        errors: Object.values(m.errors).reduce((a, b) => a + b, 0),
        errorsByClass: m.errors,
        latencyMs: { mean: m.latencySumMs / m.count, p50: q(0.5), p90: q(0.9), p99: q(0.99), max: m.latencyMaxMs },
        bytesMean: m.bytesSum / m.count,
      },
      cdf: Array.from({ length: 101 }, (_, i): [number, number] => [q(i / 100), i / 100]),
    };
  };
  const control = summarize('control');
  const treatment = summarize('treatment');
  return { arms: { control: control.summary, treatment: treatment.summary }, latencyCdf: { control: control.cdf, treatment: treatment.cdf } };
}
