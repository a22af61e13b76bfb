/**
 * A/A calibration: the same machinery with control against control. From one
 * A/A run it measures, per metric and on the scale the judge works on (log for
 * ratios), what the verdict's planning rests on:
 *   - the between-trial noise once the slot bias is removed, and the noise floor
 *     computed exactly as the verdict computes its minimum detectable effect;
 *   - the slot bias of the crossover with its interval;
 *   - the lag-1 autocorrelation of the trials (drift that persists), which later
 *     verdicts of the workload allow for, with a warning when it is material;
 *   - where the noise comes from: between processes, between trials, within a
 *     trial (Kalibera & Jones, "Rigorous benchmarking in reasonable time", 2013),
 *     and the trials a 1%, 2% and 5% change needs at this noise;
 *   - the false-positive rate of the judge that runs, over many simulated A/A
 *     experiments built from this run's own residuals (below).
 */
import { seededRandom } from '../../core/index.js';
import { studentTCdf, studentTQuantile } from '../stats.js';
import type { MetricPolicy } from '../metrics/metric-policy.js';
import type { TrialMetric } from '../metrics/trial-metrics.js';
import { MIN_DF, criticalValue, fitLook, lagOneAutocorrelation, plannedStandardError, type Boundary } from '../judge/sequential.js';
import { flipCheckedDesign } from '../judge/flip-checked-look.js';
import { fewestTrialsForFlips } from '../judge/sign-flip.js';
import { judgeSequentially } from '../judge/sequential-run.js';
import { fromInference, toInference } from '../metrics/effect-scale.js';
import { isMaterialAutocorrelation, type Calibration, type MetricCalibration, type TrialsPlan, type VarianceSplit } from '../judge/calibration-result.js';
import { resampledAaExperiment, type AaResiduals } from './aa-resampling.js';

export type { Calibration, MetricCalibration } from '../judge/calibration-result.js';

export interface CalibrateOptions {
  readonly experimentId: string;
  readonly workload: string;
  readonly createdAtMs: number;
  readonly policies: ReadonlyMap<string, MetricPolicy>;
  readonly slotSigns: ReadonlyMap<number, number>;
  /** The workload's sequential design. */
  readonly design: { readonly minTrials: number; readonly maxTrials: number };
  readonly seed: number;
  /** Simulated sequential A/A experiments the false-positive rate is measured on. @default 1000 */
  readonly subsets?: number;
  readonly alpha?: number;
  readonly minPoints?: number;
  /** Processes per arm in the A/A run (for the variance split and the plan). @default 1 */
  readonly processes?: number;
}

/** Wilson's 95% interval of a binomial share: honest at 0 of N, where the normal interval collapses to a point. */
export function wilsonInterval(count: number, of: number): { low: number; high: number } {
  if (of === 0) return { low: 0, high: 1 };
  const z = 1.959964;
  const p = count / of;
  const centre = (p + (z * z) / (2 * of)) / (1 + (z * z) / of);
  const half = (z * Math.sqrt((p * (1 - p)) / of + (z * z) / (4 * of * of))) / (1 + (z * z) / of);
  // At 0 (or all) of N the bound is exactly 0 (or 1); the formula leaves float dust there.
  return { low: count === 0 ? 0 : Math.max(0, centre - half), high: count === of ? 1 : Math.min(1, centre + half) };
}

interface MetricFit {
  readonly calibration: Omit<MetricCalibration, 'falsePositiveRate'>;
  readonly residuals: AaResiduals;
}

function varianceSplit(rows: readonly TrialMetric[], total: number, processes: number): VarianceSplit {
  // Between processes: the variance of log per-process values inside one arm of one trial, pooled.
  let ss = 0;
  let df = 0;
  for (const r of rows) {
    for (const values of [r.processes?.control, r.processes?.treatment]) {
      const logs = (values ?? [])
        .filter((v) => v > 0 || (r.metric === 'latency_shift' && v > -1))
        .map((v) => (r.metric === 'latency_shift' ? Math.log1p(v) : Math.log(v)));
      if (logs.length < 2) continue;
      const mean = logs.reduce((a, b) => a + b, 0) / logs.length;
      ss += logs.reduce((a, v) => a + (v - mean) ** 2, 0);
      df += logs.length - 1;
    }
  }
  // Within a trial: the sampling noise of the trial's own effect from its requests (its interval's width).
  const within = rows.map((r) => ((toInference(r.high, r.scale) - toInference(r.low, r.scale)) / (2 * 1.959964)) ** 2).filter(Number.isFinite);
  const withinTrial = within.length > 0 ? within.reduce((a, b) => a + b, 0) / within.length : 0;
  return { betweenProcesses: df > 0 ? ss / df : 0, betweenTrials: Math.max(0, total - withinTrial), withinTrial, processes };
}

/**
 * Trials a clean change needs to pass within ±Δ (its interval's top below Δ), and so a change of 2Δ to be
 * called, each 80% of the time: at the design's constant nominal level (its boundary), whatever n is.
 */
function plan(sd: number, rho: number, slotted: boolean, options: CalibrateOptions): TrialsPlan[] {
  const alpha = options.alpha ?? 0.05;
  // A correlation the calibration measured is given; none measured, the judge estimates its own (verdict.ts).
  const { boundary, firstDecidable } = judgedBoundary(options, slotted, rho > 0 ? 'given' : 'own');
  const parameters = slotted ? 2 : 1;
  return [0.01, 0.02, 0.05].map((change) => {
    const margin = Math.log1p(change);
    for (let n = MIN_DF + parameters; n <= 1_000; n++) {
      const se = plannedStandardError(sd, rho, n, slotted);
      // Fewer trials than their sign flips need cannot decide, however quiet (harness/judge/sign-flip.ts).
      if (n < firstDecidable || n < fewestTrialsForFlips(boundary.nominalLevel(alpha, n))) continue;
      if ((criticalValue(boundary, alpha, { n, df: n - parameters }) + studentTQuantile(0.8, n - parameters)) * se <= margin) return { change, trials: n };
    }
    return { change, trials: Number.POSITIVE_INFINITY };
  });
}

/**
 * The boundary a workload judged with this calibration is decided on (verdict.ts, draftMetric): the calibration gives
 * the serial correlation (`given`) when it measured a material one, else the look estimates its own (`own`), and a sequential design starts at the first look its flips can decide
 * (flipCheckedDesign), so plans and noise floors use the critical values the verdict will.
 */
function judgedBoundary(
  options: CalibrateOptions,
  slotted: boolean,
  serial: 'given' | 'own',
): { readonly boundary: Boundary; readonly firstDecidable: number } {
  const { minTrials, maxTrials } = options.design;
  const { first, boundary } = flipCheckedDesign({ minTrials, maxTrials, slotted, serial }, options.alpha ?? 0.05);
  return { boundary, firstDecidable: first };
}

function metricCalibration(rows: readonly TrialMetric[], options: CalibrateOptions): MetricFit | undefined {
  const scale = rows[0]!.scale;
  const effects = rows.map((r) => toInference(r.effect, r.scale));
  const signs = rows.map((r) => options.slotSigns.get(r.trial) ?? 0);
  const fit = fitLook(effects, signs, effects.length, { kind: 'given', rho: 0 });
  if (!fit) return undefined;
  const plus = signs.filter((s) => s === 1).length;
  const minus = signs.filter((s) => s === -1).length;
  const slotted = fit.slotBias !== undefined;
  const slotMean = (sign: number): number => {
    const same = effects.filter((_, i) => signs[i] === sign);
    return same.reduce((a, b) => a + b, 0) / same.length;
  };
  const residuals = effects.map((e, i) => e - (slotted ? slotMean(signs[i]!) : fit.estimate));
  const n = effects.length;
  // The typical trial's noise, which a few outlier trials (every process of an arm slow) do not inflate: the
  // floor the verdict puts under its standard error (verdict.ts, withNoiseFloor).
  const sortedAbs = residuals.map(Math.abs).sort((a, b) => a - b);
  const mad =
    sortedAbs.length % 2 === 1 ? sortedAbs[(sortedAbs.length - 1) / 2]! : (sortedAbs[sortedAbs.length / 2 - 1]! + sortedAbs[sortedAbs.length / 2]!) / 2;
  const typicalSd = Math.min(fit.sd, 1.4826 * mad * Math.sqrt(n / Math.max(1, fit.df)));
  const r1 = lagOneAutocorrelation(residuals);
  // Marriott & Pope's small-sample correction, as the judge applies it to its own looks.
  const autocorrelation = Math.max(-0.9, Math.min(0.9, (n * r1 + 1) / (n - 3)));
  const autocorrelationSe = 1 / Math.sqrt(n);
  // β has the same standard error as δ in the ±1 regression.
  const biasSe = slotted ? fit.sd * 0.5 * Math.sqrt(1 / plus + 1 / minus) : Number.NaN;
  const biasT = slotted ? studentTQuantile(0.975, Math.max(1, fit.df)) : Number.NaN;
  const biasP = !slotted ? 1 : biasSe === 0 ? (fit.slotBias === 0 ? 1 : 0) : 2 * (1 - studentTCdf(Math.abs(fit.slotBias! / biasSe), Math.max(1, fit.df)));
  const threshold = options.policies.get(rows[0]!.metric)?.threshold ?? 0.02;
  // The noise floor at the design's maximum, by the verdict's own formula (verdict.ts, minimumDetectableEffect).
  const max = options.design.maxTrials;
  // The correlation the judge will allow for (verdict.ts, serialCorrelationOf): the measured one when material.
  const rho = isMaterialAutocorrelation(autocorrelation, 1 / Math.sqrt(n)) ? Math.min(0.9, autocorrelation) : 0;
  const se = plannedStandardError(fit.sd, rho, max, slotted);
  const { boundary } = judgedBoundary(options, slotted, rho > 0 ? 'given' : 'own');
  const df = Math.max(1, max - (slotted ? 2 : 1));
  const noiseFloor = fromInference(
    Math.max(toInference(threshold, scale), criticalValue(boundary, options.alpha ?? 0.05, { n: max, df }) * se) + studentTQuantile(0.8, df) * se,
    scale,
  );
  const material = isMaterialAutocorrelation(autocorrelation, autocorrelationSe);
  return {
    calibration: {
      sd: fit.sd,
      typicalSd,
      df: fit.df,
      trials: rows.length,
      noiseFloor,
      slotBias: slotted
        ? { estimate: fit.slotBias!, low: fit.slotBias! - biasT * biasSe, high: fit.slotBias! + biasT * biasSe, pValue: biasP }
        : { estimate: 0, low: Number.NaN, high: Number.NaN, pValue: 1 },
      meanEffect: effects.reduce((a, b) => a + b, 0) / n,
      autocorrelation,
      autocorrelationSe,
      ...(material
        ? {
            warning: `trials are serially correlated (lag-1 autocorrelation ${autocorrelation.toFixed(2)} ± ${autocorrelationSe.toFixed(2)}): drift persists from trial to trial, so intervals widen by ${Math.sqrt(plannedStandardError(1, rho, max, slotted) ** 2 * max).toFixed(2)}× at ${max} trials; look for a noisy neighbour or a deployment that is not restarted per trial`,
          }
        : {}),
      varianceSplit: varianceSplit(rows, fit.sd ** 2, options.processes ?? 1),
      plan: plan(fit.sd, rho, slotted, options),
    },
    residuals: {
      metric: rows[0]!.metric,
      scale,
      slotBias: fit.slotBias ?? 0,
      autocorrelation: rho,
      residuals: residuals.map((r) => r * Math.sqrt(n / Math.max(1, fit.df))),
      rows,
    },
  };
}

export function calibrate(trialMetrics: readonly TrialMetric[], options: CalibrateOptions): Calibration {
  const trialIndexes = [...new Set(trialMetrics.map((m) => m.trial))].sort((a, b) => a - b);
  const byMetric = new Map<string, TrialMetric[]>();
  for (const m of trialMetrics) if (Number.isFinite(toInference(m.effect, m.scale))) byMetric.set(m.metric, [...(byMetric.get(m.metric) ?? []), m]);
  const fits = new Map<string, MetricFit>();
  for (const [metric, rows] of byMetric) {
    const fitted =
      rows.length >= 3
        ? metricCalibration(
            rows.sort((a, b) => a.trial - b.trial),
            options,
          )
        : undefined;
    if (fitted) fits.set(metric, fitted);
  }
  const partial: Calibration = {
    experimentId: options.experimentId,
    workload: options.workload,
    createdAtMs: options.createdAtMs,
    trials: trialIndexes.length,
    design: options.design,
    subsets: 0,
    falsePositiveRate: 0,
    anyMetricFlaggedRate: 0,
    metrics: Object.fromEntries([...fits].map(([metric, f]) => [metric, { ...f.calibration, falsePositiveRate: 0 }])),
  };

  // The false-positive rate of the judge that runs, with this calibration, on A/A experiments simulated from
  // this run: each trial's residuals of every metric drawn together (one A/A trial, keeping the metrics'
  // correlation) with a random sign (symmetric under A/A; heavy tails and bimodality kept as measured), the
  // measured slot bias, and the measured serial correlation. Reordering the same dozen trials 200 times — what
  // this did before — reported 0 most of the time whatever the truth was.
  const subsets = options.subsets ?? 1_000;
  const random = seededRandom(options.seed);
  const falseCalls = new Map<string, number>();
  let regressed = 0;
  let anyFlagged = 0;
  const residualSets = [...fits.values()].map((f) => f.residuals);
  for (let s = 0; s < subsets && residualSets.length > 0; s++) {
    const trials = resampledAaExperiment(residualSets, options.design.maxTrials, options.slotSigns, random);
    const { verdict } = judgeSequentially(trials, {
      policies: options.policies,
      slotSigns: options.slotSigns,
      design: options.design,
      calibration: partial,
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
  const used = residualSets.length > 0 ? subsets : 0;
  const metrics: Record<string, MetricCalibration> = {};
  for (const [metric, f] of fits) metrics[metric] = { ...f.calibration, falsePositiveRate: used > 0 ? (falseCalls.get(metric) ?? 0) / used : 0 };
  return {
    ...partial,
    subsets: used,
    falsePositiveRate: used > 0 ? regressed / used : 0,
    falsePositiveInterval: wilsonInterval(regressed, used),
    anyMetricFlaggedRate: used > 0 ? anyFlagged / used : 0,
    metrics,
  };
}
