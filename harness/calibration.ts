/**
 * A/A calibration: the same machinery with control against control. From
 * one A/A run of many trials it estimates, per metric, the between-trial
 * noise once the slot bias is removed (and so the noise floor of the
 * workload's design), the slot bias of the crossover with its interval, and
 * the false-positive rate of the judge that runs: the sequential judge with
 * the workload's design and the trials' own slot signs, replayed over many
 * seeded orderings of the A/A trials.
 */
import { seededRandom } from '../core/index.js';
import { studentTCdf, studentTQuantile, tInterval } from './stats.js';
import type { MetricPolicy } from './metric-policy.js';
import type { TrialMetric } from './trial-metrics.js';
import { criticalValue, fitLook, sequentialBoundary } from './sequential.js';
import { judgeSequentially } from './sequential-run.js';
import type { Calibration, MetricCalibration } from './calibration-result.js';

export type { Calibration, MetricCalibration } from './calibration-result.js';

export interface CalibrateOptions {
  readonly experimentId: string;
  readonly workload: string;
  readonly createdAtMs: number;
  readonly policies: ReadonlyMap<string, MetricPolicy>;
  readonly slotSigns: ReadonlyMap<number, number>;
  /** The workload's sequential design. */
  readonly design: { readonly minTrials: number; readonly maxTrials: number };
  readonly seed: number;
  /** @default 200 */
  readonly subsets?: number;
  readonly alpha?: number;
  readonly minPoints?: number;
}

/** The A/A trials in a seeded random order (Fisher–Yates). */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

function metricCalibration(rows: readonly TrialMetric[], options: CalibrateOptions): Omit<MetricCalibration, 'falsePositiveRate'> | undefined {
  const effects = rows.map((r) => r.effect);
  const signs = rows.map((r) => options.slotSigns.get(r.trial) ?? 0);
  const fit = fitLook(effects, signs, effects.length);
  if (!fit) return undefined;
  const plus = signs.filter((s) => s === 1).length;
  const minus = signs.filter((s) => s === -1).length;
  // β has the same standard error as δ in the ±1 regression.
  const biasSe = fit.slotBias !== undefined ? fit.sd * 0.5 * Math.sqrt(1 / plus + 1 / minus) : Number.NaN;
  const biasT = fit.slotBias !== undefined ? studentTQuantile(0.975, Math.max(1, fit.df)) : Number.NaN;
  const biasP = fit.slotBias === undefined ? 1 : biasSe === 0 ? (fit.slotBias === 0 ? 1 : 0) : 2 * (1 - studentTCdf(Math.abs(fit.slotBias / biasSe), Math.max(1, fit.df)));
  const threshold = options.policies.get(rows[0]!.metric)?.threshold ?? 0.02;
  const n = options.design.maxTrials;
  const boundary = sequentialBoundary({ ...options.design, slotted: fit.slotBias !== undefined });
  const se = fit.sd / Math.sqrt(n);
  const noiseFloor = Math.max(threshold, criticalValue(boundary, options.alpha ?? 0.05, n - 2) * se) + studentTQuantile(0.8, Math.max(1, n - 2)) * se;
  return {
    sd: fit.sd,
    df: fit.df,
    trials: rows.length,
    noiseFloor,
    slotBias: fit.slotBias !== undefined ? { estimate: fit.slotBias, low: fit.slotBias - biasT * biasSe, high: fit.slotBias + biasT * biasSe, pValue: biasP } : { estimate: 0, low: Number.NaN, high: Number.NaN, pValue: 1 },
    meanEffect: tInterval(effects).estimate,
  };
}

export function calibrate(trialMetrics: readonly TrialMetric[], options: CalibrateOptions): Calibration {
  const trialIndexes = [...new Set(trialMetrics.map((m) => m.trial))].sort((a, b) => a - b);
  const byTrial = new Map<number, TrialMetric[]>(trialIndexes.map((t) => [t, []]));
  for (const m of trialMetrics) byTrial.get(m.trial)!.push(m);
  const byMetric = new Map<string, TrialMetric[]>();
  for (const m of trialMetrics) if (Number.isFinite(m.effect)) byMetric.set(m.metric, [...(byMetric.get(m.metric) ?? []), m]);

  const subsets = options.subsets ?? 200;
  const random = seededRandom(options.seed);
  const falseCalls = new Map<string, number>();
  let regressed = 0;
  let anyFlagged = 0;
  for (let s = 0; s < subsets; s++) {
    // A sequential A/A experiment: the trials in a random order, looked at as they would arrive.
    const order = shuffled(trialIndexes, random).slice(0, options.design.maxTrials);
    const { verdict } = judgeSequentially(order.map((t) => byTrial.get(t)!), {
      policies: options.policies,
      slotSigns: options.slotSigns,
      design: options.design,
      ...(options.alpha !== undefined ? { alpha: options.alpha } : {}),
      ...(options.minPoints !== undefined ? { minPoints: options.minPoints } : {}),
    });
    if (verdict.outcome === 'regressed') regressed++;
    let any = false;
    for (const m of verdict.metrics) {
      if (m.judged && (m.verdict === 'regression' || m.verdict === 'improvement')) {
        falseCalls.set(m.metric, (falseCalls.get(m.metric) ?? 0) + 1);
        any = true;
      }
    }
    if (any) anyFlagged++;
  }
  const metrics: Record<string, MetricCalibration> = {};
  for (const [metric, rows] of byMetric) {
    if (rows.length < 3) continue;
    const calibrated = metricCalibration(rows, options);
    if (calibrated) metrics[metric] = { ...calibrated, falsePositiveRate: (falseCalls.get(metric) ?? 0) / subsets };
  }
  return {
    experimentId: options.experimentId,
    workload: options.workload,
    createdAtMs: options.createdAtMs,
    trials: trialIndexes.length,
    design: options.design,
    subsets,
    falsePositiveRate: regressed / subsets,
    anyMetricFlaggedRate: anyFlagged / subsets,
    metrics,
  };
}
