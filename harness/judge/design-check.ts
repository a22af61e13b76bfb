/**
 * What a workload's trial design can never decide, said before it runs (`tandem validate`): a look needs MIN_DF
 * residual degrees of freedom (one more trial when slots are fitted), and its trials' sign flips can give no
 * p-value below 2/2ⁿ (harness/judge/sign-flip.ts), while any look's level is at most α. A design whose last trial is
 * below either bound ends "no verdict" or "inconclusive" whatever the service does.
 */
import { MIN_DF } from './look-fit.js';
import { fewestTrialsForFlips } from './sign-flip.js';

export interface DesignToCheck {
  readonly minTrials: number;
  readonly maxTrials: number;
  /** Arms deployed per trial in crossover slots: the slot bias is fitted. */
  readonly slotted: boolean;
  readonly alpha: number;
}

/** The fewest trials at which any look of such a design can decide anything. */
export function fewestDecidingTrials(design: Pick<DesignToCheck, 'slotted' | 'alpha'>): number {
  return Math.max(MIN_DF + (design.slotted ? 2 : 1), fewestTrialsForFlips(design.alpha));
}

/** Each reason the design cannot decide, in words (empty when it can). */
export function designWarnings(design: DesignToCheck): string[] {
  const fewest = fewestDecidingTrials(design);
  if (design.maxTrials >= fewest) return [];
  const why = design.slotted ? `with deployed arms the slot bias is fitted, and ` : '';
  return [
    `at most ${design.maxTrials} trial(s) can never decide: ${why}no look of fewer than ${fewest} trials can at α = ${design.alpha} (its degrees of freedom, and its sign flips' smallest p-value 2/2ⁿ); give trials.max (or count) of at least ${fewest}, and about 20–30 for a typical service`,
  ];
}
