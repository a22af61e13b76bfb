/**
 * What a workload's trial design can never decide, said before it runs (`tandem validate`): a look needs MIN_DF
 * residual degrees of freedom (one more trial when slots are fitted), and its trials' sign flips can give no
 * p-value below 2/2ⁿ (harness/judge/sign-flip.ts), while any look's level is at most α. A design whose last trial is
 * below either bound ends "no verdict" or "inconclusive" whatever the service does.
 */
import { MIN_DF } from './look-fit.js';
import { fewestTrialsForFlips } from './sign-flip.js';
import type { Calibration } from './calibration-result.js';

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

/** What a workload asks of its critical metrics, and the room its design gives them. */
export interface ThresholdsToCheck {
  /** Critical metrics judged on a relative scale, each with its threshold (e.g. 0.02). */
  readonly thresholds: ReadonlyMap<string, number>;
  readonly maxTrials: number;
  /** trials.budget, and what one trial takes at least (warm-up + measurement). */
  readonly budgetMs: number;
  readonly trialMs: number;
}

/**
 * Each critical threshold the workload's last A/A calibration says its design cannot reach: the trials an unchanged
 * build needs to pass within it (80% of the time, the calibration's plan) against trials.max and the budget. The
 * plan is for ±1, 2 and 5%; between them the trials scale with 1/threshold² (the interval's width is σ/√n).
 */
export function thresholdWarnings(design: ThresholdsToCheck, calibration: Calibration): string[] {
  const warnings: string[] = [];
  for (const [metric, threshold] of design.thresholds) {
    const plan = calibration.metrics[metric]?.plan?.filter((p) => Number.isFinite(p.trials));
    if (!plan || plan.length === 0) continue;
    const nearest = plan.reduce((a, b) => (Math.abs(Math.log(b.change / threshold)) < Math.abs(Math.log(a.change / threshold)) ? b : a));
    const needed = Math.ceil(nearest.trials * (Math.log1p(nearest.change) / Math.log1p(threshold)) ** 2);
    const minutes = (needed * design.trialMs) / 60_000;
    const percent = `${(threshold * 100).toFixed(threshold < 0.01 ? 2 : 1)}%`;
    if (needed > design.maxTrials)
      warnings.push(
        `${metric} at ±${percent} needs about ${needed} trials at the noise the workload's last calibration measured; trials.max is ${design.maxTrials}: raise it, raise the threshold, or cut the noise (docs/verdicts.md)`,
      );
    else if (needed * design.trialMs > design.budgetMs)
      warnings.push(
        `${metric} at ±${percent} needs about ${needed} trials, at least ${minutes.toFixed(1)} min, at the noise the workload's last calibration measured; trials.budget is ${(design.budgetMs / 60_000).toFixed(1)} min`,
      );
  }
  return warnings;
}
