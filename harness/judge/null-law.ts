/**
 * The shapes the sequential boundary (sequential.ts) and its cache between runs (law-cache.ts) share: a design,
 * and the simulated null law of its looks. Apart from both so that neither imports the other.
 */
import type { LookEstimator } from './look-fit.js';

/** What fixes the law of the looks: when they happen and whether slots are fitted. */
export interface SequentialDesign {
  readonly minTrials: number;
  readonly maxTrials: number;
  /** Arms with crossover slots (deployed per trial): slots alternate from trial to trial. */
  readonly slotted: boolean;
  /**
   * Whether each look estimates its own serial correlation (`own`, the default) or is given it by a calibration
   * (`given`): the boundary is simulated for the statistic that judges, with or without that estimate inside it.
   */
  readonly serial?: 'own' | 'given';
  /** The estimator the looks use (default `huber`, the judge's). */
  readonly estimator?: LookEstimator;
}

/**
 * The null law of the looks of every design ending at `maxTrials`: for each look with degrees of freedom, its q over
 * the simulated sequences (sorted), and each sequence's calibrated q there. A look's calibrated q is the share of
 * simulated sequences whose same look had a q at most as small: its exact p-value under Gaussian trials, whatever
 * the estimator does to the t statistic's tails at few trials (an M-estimate's scale from six trials is far noisier
 * than an sd). A design from `minTrials` takes the smallest calibrated q over its looks (designBoundary): a constant
 * level on calibrated q is then Pocock's design, with the per-look levels this law gives. One law serves every
 * first look, so choosing where a design starts (flip-checked-look.ts, flipsFirstLook) costs no simulation.
 */
export interface NullLaw {
  readonly sorted: readonly Float64Array[];
  readonly calibrated: readonly Float64Array[];
}

/** What a law depends on: every design ending at the same last look shares it, whatever its first. */
export type LawKey = Omit<SequentialDesign, 'minTrials'>;
