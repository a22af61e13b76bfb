/**
 * Scenarios of the verdict bench: seeded synthetic experiments judged by
 * Tandem's sequential judge and, on the same data, by the baselines it must
 * beat. Each experiment's trials are generated once and reduced to per-trial
 * metrics once; every judge then reads the same trials.
 */
import {
  judge,
  judgeSequentially,
  lookByLook,
  metricPolicies,
  tInterval,
  trialMetrics,
  type Calibration,
  type LookEstimator,
  type SerialCorrelation,
  type TrialMetric,
} from '../../harness/index.js';
import { kayentaJudge } from './kayenta-judge.js';
import { judge as previousJudge } from './previous-judge/verdict.js';
import { syntheticExperiment, syntheticSlotSign, type SyntheticOptions } from './synthetic-experiment.js';

export const THRESHOLD = 0.02;
export const ALPHA = 0.05;

/** The synthetic workload: per-trial effect sd ≈ 3% (fresh processes per trial on a shared machine). */
export const NOISE = { records: 200, armDrift: 0.015, trialDrift: 0.05, recordSigma: 0.6, requestSigma: 0.25 } as const;
export const DESIGN = { minTrials: 4, maxTrials: 30 } as const;

const policies = metricPolicies([]);

export interface Scenario {
  readonly name: string;
  readonly shift: number;
  /** Multiplies the per-arm drift and per-request noise: the experiment's noise relative to the calibration's. */
  readonly noiseScale?: number;
  readonly slotBias?: number;
  /** Fresh processes per arm per trial, a share of them slow for their whole life by `slowdown`. */
  readonly processes?: number;
  readonly slowShare?: number;
  readonly slowdown?: number;
  /** Per-arm drift persisting across trials as AR(1) with this lag-1 correlation. */
  readonly armDriftRho?: number;
  /** Multiplies the per-arm drift alone (how much of the trial's noise is drift). */
  readonly armDriftScale?: number;
  /** Per-arm trial drift from Student's t with 3 df. */
  readonly heavyTails?: boolean;
  /** The treatment's share of slow processes (a change that makes them more common). @default slowShare */
  readonly treatmentSlowShare?: number;
  /** Every treatment process slower by `factor` in this share of trials (a change that hurts some trials only). */
  readonly shock?: { readonly share: number; readonly factor: number };
  /** CPU per request measured (and so judged, critical at 1%), with this per-process noise. */
  readonly cpuSigma?: number;
}

export interface Experiment {
  readonly trials: readonly (readonly TrialMetric[])[];
  /** The trials a `shock` scenario hit. */
  readonly shocked: readonly number[];
  readonly latencies: readonly { readonly control: readonly number[]; readonly treatment: readonly number[] }[];
}

/** The synthetic experiment a scenario describes (the bench's calibrations draw theirs from it too). */
export function syntheticOptionsOf(seed: number, scenario: Scenario, trials: number): SyntheticOptions {
  const scale = scenario.noiseScale ?? 1;
  return {
    seed,
    trials,
    records: NOISE.records,
    shift: scenario.shift,
    armDrift: NOISE.armDrift * scale * (scenario.armDriftScale ?? 1),
    trialDrift: NOISE.trialDrift,
    recordSigma: NOISE.recordSigma,
    requestSigma: NOISE.requestSigma * scale,
    slotBias: scenario.slotBias ?? 0,
    ...(scenario.processes !== undefined ? { processes: scenario.processes } : {}),
    ...(scenario.slowShare !== undefined ? { slowShare: scenario.slowShare } : {}),
    ...(scenario.slowdown !== undefined ? { slowdown: scenario.slowdown } : {}),
    ...(scenario.armDriftRho !== undefined ? { armDriftRho: scenario.armDriftRho } : {}),
    ...(scenario.heavyTails ? { heavyTails: true } : {}),
    ...(scenario.treatmentSlowShare !== undefined ? { treatmentSlowShare: scenario.treatmentSlowShare } : {}),
    ...(scenario.shock !== undefined ? { shock: scenario.shock } : {}),
    ...(scenario.cpuSigma !== undefined ? { cpuSigma: scenario.cpuSigma } : {}),
  };
}

export function makeExperiment(seed: number, scenario: Scenario, trials: number): Experiment {
  const shocked: number[] = [];
  const data = syntheticExperiment({ ...syntheticOptionsOf(seed, scenario, trials), onShock: (t) => shocked.push(t) });
  return {
    shocked,
    trials: data.map((t) => trialMetrics(t, { seed, resamples: 0 })),
    latencies: data.map((t) => ({
      control: t.outcomes.filter((o) => o.arm === 'control').map((o) => o.latencyMs),
      treatment: t.outcomes.filter((o) => o.arm === 'treatment').map((o) => o.latencyMs),
    })),
  };
}

export const slotSigns = new Map(Array.from({ length: 200 }, (_, t) => [t, syntheticSlotSign(t)] as const));

export interface JudgedRun {
  readonly regressed: boolean;
  readonly passed: boolean;
  readonly trials: number;
  readonly anyFlagged: boolean;
}

const judgedRun = (run: { verdict: { outcome: string; metrics: readonly { judged: boolean; verdict: string }[] }; trials: number }): JudgedRun => ({
  regressed: run.verdict.outcome === 'regressed',
  passed: run.verdict.outcome === 'passed',
  trials: run.trials,
  anyFlagged: run.verdict.metrics.some((m) => m.judged && (m.verdict === 'regression' || m.verdict === 'improvement')),
});

/** Tandem's judge as an experiment meets it: looks from min to max, stop when decided. */
export function sequentialJudge(
  e: Experiment,
  calibration?: Calibration,
  estimator: LookEstimator = 'huber',
  signFlips = true,
  serialCorrelation?: SerialCorrelation,
): JudgedRun {
  return judgedRun(
    judgeSequentially(e.trials.slice(0, DESIGN.maxTrials), {
      policies,
      slotSigns,
      design: DESIGN,
      estimator,
      signFlips,
      ...(calibration ? { calibration } : {}),
      ...(serialCorrelation ? { serialCorrelation } : {}),
    }),
  );
}

/** The judge before issue 30 (bench/support/previous-judge), the same way, on the same trials. */
export function previousSequentialJudge(e: Experiment, calibration?: Calibration): JudgedRun {
  const options = { policies, slotSigns, design: DESIGN, ...(calibration ? { calibration } : {}) };
  return judgedRun(lookByLook(e.trials.slice(0, DESIGN.maxTrials), DESIGN, (metrics) => previousJudge(metrics, options)));
}

/** A regression called at any look from min to max, even after the judge would have stopped: the repeated-looks guarantee. */
export function regressionAtAnyLook(e: Experiment): boolean {
  for (let n = DESIGN.minTrials; n <= DESIGN.maxTrials; n++) {
    if (judge(e.trials.slice(0, n).flat(), { policies, slotSigns, design: DESIGN }).outcome === 'regressed') return true;
  }
  return false;
}

/** The same judge with one look at n trials (a fixed horizon). */
export function fixedJudge(e: Experiment, n: number): boolean {
  return judge(e.trials.slice(0, n).flat(), { policies, slotSigns, design: { minTrials: n, maxTrials: n } }).outcome === 'regressed';
}

const shiftEffects = (e: Experiment, n: number): number[] => e.trials.slice(0, n).map((t) => t.find((m) => m.metric === 'latency_shift')!.effect);

/** Baseline: the mean per-trial latency shift at or beyond the threshold is a regression (no statistics). */
export function naiveThreshold(e: Experiment, n: number): boolean {
  const effects = shiftEffects(e, n);
  return effects.reduce((a, b) => a + b, 0) / effects.length >= THRESHOLD;
}

/** Baseline: a one-sample t-test of the per-trial latency shifts, without calibration, slot term or threshold. */
export function plainTTest(e: Experiment, n: number): boolean {
  const interval = tInterval(shiftEffects(e, n));
  return interval.pValue < ALPHA && interval.estimate > 0;
}

/** Baseline: Kayenta-style, every request of n trials pooled per arm, Mann–Whitney with a 2% effect floor. */
export function kayenta(e: Experiment, n: number, seed: number): boolean {
  const control = e.latencies.slice(0, n).flatMap((t) => t.control);
  const treatment = e.latencies.slice(0, n).flatMap((t) => t.treatment);
  return kayentaJudge(control, treatment, { alpha: ALPHA, floor: THRESHOLD, seed }).verdict === 'regression';
}
