/**
 * A/A calibration: the same machinery with control against control. From
 * one A/A run of many trials it estimates, per metric, the between-trial
 * noise (and so the noise floor at the workload's trial count), the slot
 * bias of the crossover, and the false-positive rate of the full judge,
 * by judging many seeded subsets of the configured trial count.
 */
import { seededRandom } from '../core/index.js';
import { minimumDetectableEffect, tInterval } from './stats.js';
import type { MetricPolicy } from './metric-policy.js';
import type { TrialMetric } from './trial-metrics.js';
import { judge } from './verdict.js';

export interface MetricCalibration {
  /** Between-trial sd of the A/A per-trial effects once the slot bias is removed. */
  readonly sd: number;
  /** Degrees of freedom of `sd` (trials − 2: the mean and the slot bias were estimated). */
  readonly df: number;
  readonly trials: number;
  /** Noise floor: the minimum detectable effect at the workload's trial count. */
  readonly noiseFloor: number;
  /** Effect seen when the "treatment" copy runs in slot A rather than B (per trial: effect = bias × sign). */
  readonly slotBias: { readonly estimate: number; readonly low: number; readonly high: number; readonly pValue: number };
  /** Share of judged subsets in which this metric was called a regression or an improvement. */
  readonly falsePositiveRate: number;
  /** Mean A/A effect (should be ~0). */
  readonly meanEffect: number;
}

export interface Calibration {
  readonly experimentId: string;
  readonly workload: string;
  readonly createdAtMs: number;
  /** Trials in the A/A run. */
  readonly trials: number;
  /** Trial count judged per subset: the workload's configured count. */
  readonly configuredTrials: number;
  readonly subsets: number;
  /** Share of subsets in which any judged metric was called a regression or an improvement. */
  readonly falsePositiveRate: number;
  readonly metrics: Readonly<Record<string, MetricCalibration>>;
}

export interface CalibrateOptions {
  readonly experimentId: string;
  readonly workload: string;
  readonly createdAtMs: number;
  readonly policies: ReadonlyMap<string, MetricPolicy>;
  readonly slotSigns: ReadonlyMap<number, 1 | -1>;
  readonly configuredTrials: number;
  readonly seed: number;
  /** @default 200 */
  readonly subsets?: number;
  readonly alpha?: number;
  readonly minPoints?: number;
}

/** k distinct items of `items`, by a partial Fisher–Yates shuffle. */
function pick<T>(items: readonly T[], k: number, random: () => number): T[] {
  const copy = [...items];
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(random() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, k);
}

export function calibrate(trialMetrics: readonly TrialMetric[], options: CalibrateOptions): Calibration {
  const trialIndexes = [...new Set(trialMetrics.map((m) => m.trial))].sort((a, b) => a - b);
  const k = Math.min(options.configuredTrials, trialIndexes.length);
  const subsets = options.subsets ?? 200;
  const random = seededRandom(options.seed);
  const falseCalls = new Map<string, number>();
  let anyFalse = 0;
  for (let s = 0; s < subsets; s++) {
    const chosen = new Set(pick(trialIndexes, k, random));
    const verdict = judge(
      trialMetrics.filter((m) => chosen.has(m.trial)),
      { policies: options.policies, ...(options.alpha !== undefined ? { alpha: options.alpha } : {}), ...(options.minPoints !== undefined ? { minPoints: options.minPoints } : {}) },
    );
    let any = false;
    for (const m of verdict.metrics) {
      if (m.judged && (m.verdict === 'regression' || m.verdict === 'improvement')) {
        falseCalls.set(m.metric, (falseCalls.get(m.metric) ?? 0) + 1);
        any = true;
      }
    }
    if (any) anyFalse++;
  }
  const metrics: Record<string, MetricCalibration> = {};
  const byMetric = new Map<string, TrialMetric[]>();
  for (const m of trialMetrics) if (Number.isFinite(m.effect)) byMetric.set(m.metric, [...(byMetric.get(m.metric) ?? []), m]);
  for (const [metric, rows] of byMetric) {
    if (rows.length < 3) continue;
    const all = tInterval(rows.map((r) => r.effect));
    const sign = (trial: number): number => options.slotSigns.get(trial) ?? 1;
    // Under A/A the true effect is 0, so effect × sign estimates the slot bias directly.
    const bias = tInterval(rows.map((r) => r.effect * sign(r.trial)));
    // What remains once the slot bias is removed is the noise a later experiment cannot remove.
    const residuals = rows.map((r) => r.effect - bias.estimate * sign(r.trial));
    const residualMean = residuals.reduce((a, b) => a + b, 0) / residuals.length;
    const df = rows.length - 2;
    const sd = Math.sqrt(residuals.reduce((s, r) => s + (r - residualMean) ** 2, 0) / df);
    metrics[metric] = {
      sd,
      df,
      trials: rows.length,
      noiseFloor: minimumDetectableEffect(sd, options.configuredTrials, options.alpha),
      slotBias: { estimate: bias.estimate, low: bias.low, high: bias.high, pValue: bias.pValue },
      falsePositiveRate: (falseCalls.get(metric) ?? 0) / subsets,
      meanEffect: all.estimate,
    };
  }
  return {
    experimentId: options.experimentId,
    workload: options.workload,
    createdAtMs: options.createdAtMs,
    trials: trialIndexes.length,
    configuredTrials: k,
    subsets,
    falsePositiveRate: anyFalse / subsets,
    metrics,
  };
}
