/**
 * What one look at per-trial effects is (LookFit) and the arithmetic every estimator of a look shares: the nominal
 * p-value, the minimum degrees of freedom, and the allowance for serial correlation between trials.
 */
import { studentTCdf } from '../stats.js';

export type NoiseSource = 'own trials' | 'exact (no variation)';

/** One look at the first n per-trial effects. */
export interface LookFit {
  readonly n: number;
  /** δ: the effect with the slot bias removed. */
  readonly estimate: number;
  readonly standardError: number;
  /** Between-trial sd of the residuals (after the slot term). */
  readonly sd: number;
  readonly df: number;
  /** β, when the slot term was fitted. */
  readonly slotBias?: number;
  readonly noise: NoiseSource;
  /** Nominal two-sided p-value of δ = 0 at this look alone. */
  readonly q: number;
  /** Lag-1 autocorrelation of the trials the standard error allowed for (0: none). */
  readonly autocorrelation: number;
  /** The standard error is the A/A calibration's floor, not the trials' own (verdict.ts, withNoiseFloor). */
  readonly calibratedFloor?: boolean;
  /** The sign-flip p-value (harness/judge/sign-flip.ts) when it was above the look's own q and so became q. */
  readonly signFlipP?: number;
  /** The flips alone were not significant, so the standard error was widened to match their p-value. */
  readonly signFlipWidened?: boolean;
  /**
   * The sign-flip p-value of the trials about a threshold the interval excluded, when it was not small enough to
   * exclude it: the standard error was widened until the interval reaches the threshold.
   */
  readonly equivalenceFlipP?: number;
  /**
   * The trials' mean and its interval (inference scale) when they did not exclude a threshold the look's interval
   * excluded: the standard error was widened until the interval reaches it (mean-checked-look.ts).
   */
  readonly meanBound?: { readonly estimate: number; readonly low: number; readonly high: number };
}

/** Effects that differ by less than this are the same number (float dust, not noise). */
export const EXACT_TOLERANCE = 1e-9;

export function nominalP(estimate: number, standardError: number, df: number): number {
  if (standardError === 0) return Math.abs(estimate) <= EXACT_TOLERANCE ? 1 : 0;
  return Math.min(1, 2 * (1 - studentTCdf(Math.abs(estimate / standardError), df)));
}

/**
 * No look is taken with fewer residual degrees of freedom than this: a variance from 2 df is below a tenth of
 * the truth one time in ten, and the first look of a 4-trial crossover (2 df once the slot bias is fitted) let
 * two slow processes in one slot be absorbed by the slot term and a regression pass. With 4 df that chance is
 * under 2%, and the t quantile at the sequential level is finite enough to decide.
 */
export const MIN_DF = 4;

/**
 * How the judge allows for serial correlation between trials (drift that persists from one trial to the next):
 * `own` estimates the lag-1 autocorrelation from the look's own residuals (bias-corrected, clamped to
 * [0, 0.9]), `given` takes it from an A/A calibration that measured it over many more trials.
 */
export type SerialCorrelation = { readonly kind: 'own' } | { readonly kind: 'given'; readonly rho: number };

/**
 * n·Var(mean)/σ² for an AR(1) sequence with lag-1 correlation ρ, n terms: 1 + 2 Σ_{k<n} (1 − k/n) ρ^k. The
 * factor by which correlated trials widen the interval of their mean (3 at ρ = 0.5 for long runs).
 */
export function ar1VarianceFactor(rho: number, n: number): number {
  if (rho === 0 || n < 2) return 1;
  // The closed form of the sum: 1 + 2ρ/(1 − ρ) − 2ρ(1 − ρⁿ)/(n(1 − ρ)²).
  return 1 + (2 * rho) / (1 - rho) - (2 * rho * (1 - rho ** n)) / (n * (1 - rho) ** 2);
}

/**
 * How much a residual variance from n serially correlated trials understates the variance of their mean:
 * the AR(1) factor, and the part of it the p fitted means absorbed (E[s²] = σ²(n − p·f)/(n − p)).
 */
export function varianceInflation(rho: number, n: number, parameters: number): number {
  const f = rho > 0 ? ar1VarianceFactor(rho, n) : 1;
  if (f === 1) return 1;
  const df = n - parameters;
  return (f * df) / Math.max(n - parameters * f, 0.25 * df);
}

/**
 * The standard error a look at n balanced trials will have, from a per-trial sd and lag-1 correlation (an A/A
 * calibration's): the noise floor, the trials a change needs and the verdict's planning all use this one.
 */
export function plannedStandardError(sd: number, rho: number, n: number, slotted: boolean): number {
  return (sd * Math.sqrt(varianceInflation(rho, n, slotted ? 2 : 1))) / Math.sqrt(n);
}

/** Lag-1 autocorrelation of residuals in trial order (0 when they have no spread). */
export function lagOneAutocorrelation(residuals: readonly number[]): number {
  let ss = 0;
  let cross = 0;
  for (let i = 0; i < residuals.length; i++) {
    ss += residuals[i]! ** 2;
    if (i > 0) cross += residuals[i]! * residuals[i - 1]!;
  }
  return ss > 0 ? cross / ss : 0;
}

/**
 * The look's own lag-1 autocorrelation, corrected for its small-sample bias (E[r₁] ≈ ρ − (1 + 3ρ)/n for a
 * mean estimated from the same n values; Marriott & Pope 1954) and clamped to [0, 0.9]: negative correlation
 * would narrow the interval, and the boundary is simulated with this very estimate inside it.
 */
export function ownRho(r1: number, n: number): number {
  const corrected = (n * r1 + 1) / (n - 3);
  return Math.min(0.9, Math.max(0, Number.isFinite(corrected) ? corrected : 0));
}

/**
 * The looks of one metric, one trial at a time (the judge and the boundary's simulation share it, so the boundary
 * is the law of exactly what judges). `sign` is +1 when the treatment ran in slot A in that trial, −1 in slot B, 0
 * when the arms have no slots (URLs). The slot term is fitted when both slots occur and every trial has a slot;
 * `fit()` is undefined while fewer than MIN_DF residual degrees of freedom remain.
 */
export interface LookAccumulator {
  add(effect: number, sign: number): void;
  fit(): LookFit | undefined;
}

/**
 * How a look estimates the effect across trials: `huber` (the judge's) is an M-estimate that a minority of outlier
 * trials cannot move far (harness/judge/huber-looks.ts); `mean` is least squares, kept as the verdict bench's baseline.
 */
export type LookEstimator = 'huber' | 'mean';
