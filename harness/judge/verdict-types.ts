/** The judge's output: a verdict per metric and one for the experiment, and the options it judges with. */
import type { MetricPolicy } from '../metrics/metric-policy.js';
import type { EffectScale } from '../metrics/trial-metrics.js';
import type { LookEstimator, NoiseSource, SerialCorrelation } from './sequential.js';
import type { Calibration } from './calibration-result.js';

export type MetricVerdictKind = 'regression' | 'improvement' | 'no change' | 'inconclusive' | 'no data';
export type ExperimentOutcome = 'passed' | 'regressed' | 'inconclusive' | 'no data';
/** What an experiment whose critical metrics are still undecided at the end becomes. */
export type OnInconclusive = 'pass' | 'fail' | 'inconclusive';

/** The estimate and interval of one metric after a given number of trials. */
export interface MetricLook {
  readonly trials: number;
  readonly estimate: number;
  readonly low: number;
  readonly high: number;
}

export interface MetricVerdict {
  readonly metric: string;
  readonly unit: string;
  readonly scale: EffectScale;
  /** False for metrics reported without a policy (their verdict is descriptive only). */
  readonly judged: boolean;
  readonly policy?: MetricPolicy;
  /** Mean over trials of each arm's value. */
  readonly control: number;
  readonly treatment: number;
  readonly trials: number;
  readonly points: number;
  /** Effect estimate (slot bias removed) and its interval, valid at every look of the design, on the metric's scale. */
  readonly estimate: number;
  readonly low: number;
  readonly high: number;
  /** Anytime-valid p-value of "no change" (holds however many looks were taken). */
  readonly pValue: number;
  /** Benjamini–Hochberg adjusted across the judged metrics of the experiment that could be significant (tested-family.ts). */
  readonly adjustedP: number;
  /** Whether the correction counted it: judged, with data, and able to reach its share of α on its trials. */
  readonly counted?: boolean;
  /** Between-trial standard deviation of the per-trial effects after the slot term. */
  readonly sd: number;
  /** The smallest regression this rule calls with 80% probability at this trial count (threshold and multiplicity included). */
  readonly minimumDetectableEffect: number;
  /** The calibrated noise floor at this trial count, when an A/A calibration exists. */
  readonly noiseFloor?: number;
  /** Slot bias β fitted and removed from the estimate (effect when the treatment ran in slot A minus the average). */
  readonly slotBias?: number;
  /** Degrees of freedom of the interval. */
  readonly df: number;
  readonly noise: NoiseSource;
  readonly suggestedTrials?: number;
  /**
   * What this metric's noise allows, from the look in hand: about how many trials decide "no change" on an
   * unchanged build (80% of the time), and the smallest regression the design's last trial calls with 80%
   * probability. Said early so that `inconclusive` is never a surprise at the end.
   */
  readonly forecast?: { readonly trialsForThreshold: number; readonly resolvableAtMax: number; readonly maxTrials: number };
  /** For an undecided metric, what its interval still allows ("a regression up to +3.7%"). */
  readonly cannotExclude?: string;
  /** Regression, improvement or no change: more trials are not needed for this metric. */
  readonly decided: boolean;
  /** The interval after each look, first to last (how it narrowed). */
  readonly looks: readonly MetricLook[];
  readonly verdict: MetricVerdictKind;
  readonly reason: string;
}

export interface ExperimentVerdict {
  readonly outcome: ExperimentOutcome;
  readonly reasons: readonly string[];
  readonly alpha: number;
  readonly trials: number;
  readonly design: { readonly minTrials: number; readonly maxTrials: number };
  /** The outcome cannot change with more trials: a regression, or every critical metric decided. */
  readonly decided: boolean;
  /** The critical metrics still undecided, in words ("a latency_shift regression up to +3.7% cannot be excluded"). */
  readonly undecided: readonly string[];
  /** Passed or failed only because the workload's onInconclusive said so. */
  readonly inconclusivePolicy?: OnInconclusive;
  /** How many hypotheses Benjamini–Hochberg counted (Tarone's K: tested-family.ts). */
  readonly familySize?: number;
  readonly metrics: readonly MetricVerdict[];
}

export interface JudgeOptions {
  readonly policies: ReadonlyMap<string, MetricPolicy>;
  /** @default 0.05 */
  readonly alpha?: number;
  /** Request-level metrics with fewer paired records than this are no data. @default 50 */
  readonly minPoints?: number;
  /** +1 when the treatment ran in slot A in that trial, −1 in slot B, 0 (or absent) without slots. */
  readonly slotSigns?: ReadonlyMap<number, number>;
  readonly calibration?: Calibration;
  /** Looks from minTrials to maxTrials; by default one look at the trials there are (fixed horizon). */
  readonly design?: { readonly minTrials: number; readonly maxTrials: number };
  /** @default 'inconclusive' */
  readonly onInconclusive?: OnInconclusive;
  /** Why data may be missing (trials whose load failed, a corpus that ran out), appended to no-data reasons. */
  readonly noDataCauses?: readonly string[];
  /** How each look estimates the effect across trials. @default 'huber' (`mean`: least squares, the verdict bench's baseline) */
  readonly estimator?: LookEstimator;
  /**
   * A look that would decide must be confirmed by its trials' sign flips (harness/judge/flip-checked-look.ts), and a
   * sequential boundary starts where they can. @default true (false: the verdict bench's baseline)
   */
  readonly signFlips?: boolean;
  /**
   * The serial correlation every look allows for, overriding the choice from the calibration (serialCorrelationOf):
   * the verdict bench's baseline judges with `{ kind: 'given', rho: 0 }`, as deployed arms were judged until
   * 2026-12-07. @default the calibration's when material, else the look's own
   */
  readonly serialCorrelation?: SerialCorrelation;
}
