/**
 * A look checked by its trials' sign flips (harness/judge/sign-flip.ts) wherever it would decide: a significant effect
 * must also stand out among the flips of its trials, and an interval that excludes a regression beyond the
 * threshold must also be confirmed by the flips of the trials about that threshold. When the flips do not
 * confirm, the look's standard error is widened so its interval says what the flips say; when they do, the
 * interval stays the estimator's (the flips' p-value is coarse at few trials — its smallest is 2/2ⁿ — and would
 * otherwise widen a consistent result's interval several-fold).
 *
 * Why the equivalence side too: a true +3% change on clustered trials (a process at one of two levels 11% apart,
 * little spread within a level) was passed 5.2% of the time in the verdict bench (1,000 experiments), the slot term fitting a lopsided
 * draw as slot bias plus a small effect with a tiny standard error. Under a change exactly at the threshold,
 * the trials less the threshold are symmetric about zero, so the flips of those give an exact test of "no
 * regression beyond it" (the two one-sided tests of equivalence, Schuirmann 1987, each by randomization): one-sided,
 * since only trials on the near side of the limit speak for equivalence; a two-sided p-value asked twice the evidence.
 */
import { signFlipP } from './sign-flip.js';
import { studentTQuantile } from '../stats.js';
import { toInference } from '../metrics/effect-scale.js';
import type { EffectScale } from '../metrics/trial-metrics.js';
import type { LookFit } from './look-fit.js';
import { sequentialBoundary, type Boundary, type SequentialDesign } from './sequential.js';
import type { MetricPolicy } from '../metrics/metric-policy.js';

export interface FlipContext {
  /** The look's per-trial effects on the inference scale, and their slot signs. */
  readonly effects: readonly number[];
  readonly signs: readonly number[];
  /** The look's critical value: its interval is estimate ± critical × standard error. */
  readonly critical: number;
  /** Whether a p-value is significant at this look (at its nominal level). */
  readonly significant: (p: number) => boolean;
}

/**
 * A look that would be significant (`couldDecide`) must also stand out among its trials' sign flips: the larger
 * p-value is the look's q. When the flips alone would not be significant, the standard error widens to the
 * t-test's for their p-value and at least until the interval reaches zero.
 */
export function significanceChecked(fit: LookFit, context: FlipContext, couldDecide: boolean): LookFit {
  if (!couldDecide || fit.noise !== 'own trials') return fit;
  const p = signFlipP(context.effects, context.signs);
  if (!(p > fit.q)) return fit;
  if (context.significant(p)) return { ...fit, q: p, signFlipP: p };
  const matching = Math.abs(fit.estimate) / Math.min(studentTQuantile(1 - p / 2, Math.max(1, fit.df)), context.critical);
  return { ...fit, q: p, standardError: Math.max(fit.standardError, matching), signFlipP: p, signFlipWidened: true };
}

/**
 * An interval that excludes a regression beyond the policy's threshold (on each bad side) must be confirmed by the
 * flips of the trials about that threshold; when it is not, the standard error widens until the interval reaches
 * the threshold, so the metric is not decided "no change" on it. Unjudged metrics (no policy) are not checked.
 */
export function equivalenceChecked(fit: LookFit, context: FlipContext, policy: MetricPolicy | undefined, scale: EffectScale): LookFit {
  if (policy === undefined || fit.noise !== 'own trials') return fit;
  const limits: number[] = [];
  if (policy.direction !== 'decrease-is-bad') limits.push(toInference(policy.threshold, scale));
  if (policy.direction !== 'increase-is-bad') limits.push(toInference(-policy.threshold, scale));
  let checked = fit;
  for (const limit of limits) {
    const half = context.critical * fit.standardError;
    const excluded = limit > fit.estimate ? fit.estimate + half < limit : fit.estimate - half > limit;
    if (!excluded || !Number.isFinite(limit)) continue;
    // One-sided, as each of the two one-sided tests is: the trials must lie on the near side of this limit.
    const p = signFlipP(
      context.effects.map((e) => e - limit),
      context.signs,
      limit > fit.estimate ? 'below' : 'above',
    );
    if (context.significant(p)) continue;
    // Just past the threshold, so that "lies below it" cannot hold by float dust.
    const reaching = (Math.abs(limit - fit.estimate) / context.critical) * (1 + 1e-9);
    checked = { ...checked, standardError: Math.max(checked.standardError, reaching), equivalenceFlipP: p };
  }
  return checked;
}

/**
 * The first look m from `from` to `to` whose sign flips can reach, at m, the level of the design that starts there
 * (2/2ᵐ below `boundaryFrom(m)`'s level at α), or `to` when none can: looks before it cannot decide, whatever their
 * trials, so that design spends no α on them. Each candidate is judged on its own design's levels, not on the
 * requested one's, which spread α over more looks: at α = 0.01 over looks 4..48 the requested design's level at
 * look 12 is 3.4–4.3·10⁻⁴ (64,000 sequences, two seeds), below the flips' 2/2¹² = 4.9·10⁻⁴, so it first admitted
 * them at 13, while the design from 12 has 5.4–6.7·10⁻⁴ there. The choice depends on the design alone, never on
 * the trials, so each design's boundary keeps its level.
 */
export function flipsFirstLook(boundaryFrom: (from: number) => Boundary, alpha: number, from: number, to: number): number {
  for (let m = Math.max(1, from); m <= to; m++) if (2 / 2 ** m < boundaryFrom(m).nominalLevel(alpha, m)) return m;
  return to;
}

/**
 * The design a flip-checked judge decides on: `design` from its flips' first look (flipsFirstLook), that look and
 * its boundary. The verdict, the calibration's plan and the boundary bench all take it from here, so they agree
 * on where a design starts. A fixed horizon (one look) is its own design.
 */
export function flipCheckedDesign(design: SequentialDesign, alpha: number): { readonly first: number; readonly boundary: Boundary } {
  const boundaryFrom = (minTrials: number): Boundary => sequentialBoundary({ ...design, minTrials });
  const first = design.minTrials >= design.maxTrials ? design.minTrials : flipsFirstLook(boundaryFrom, alpha, design.minTrials, design.maxTrials);
  return { first, boundary: boundaryFrom(first) };
}

/**
 * The smallest p-value the boundary's anytime p-value, checked by the flips as the judge does, was measured to
 * hold. The boundary's law came from 8,000 simulated sequences (16,000 since), and below a few in a thousand it
 * is read off a handful of them: a look's q below every simulated draw at its look maps to 1/8,001 (1/16,001
 * now), and the M-estimate's statistic has heavier tails there than its nominal t (at the 13th look of looks
 * 13..48, P(q ≤ c) = 1.8c at c = 10⁻³ and 3.2c at 3·10⁻⁵, from 200,000 sequences). The anytime p-value alone was too small on fresh null
 * sequences from x = 0.0025 (1.2–1.6×) down (3.8× at 0.0005). With the flips' p-value beside it, the judge's
 * p-value fell below x 0.35–0.77 times as often as x for x from 0.01 down to 0.001, on Gaussian, Student-t (3 df)
 * and clustered trials alike (40,000 sequences each, two seeds; `npm run bench -- boundary`), but 0.9–1.55 times
 * at 0.0005. So below 0.001 the judge does not lean on the boundary (resolvedPValue).
 */
export const RESOLVED_P = 0.001;

/**
 * The p-value a look reports, held where the boundary cannot vouch for it (below RESOLVED_P). There it is at
 * least Bonferroni over the looks on the trials' exact sign-flip p-value, L × flip, L counting the looks whose
 * flips can fall below RESOLVED_P at all (looksBelowResolution): a p-value of x < RESOLVED_P then needs
 * flip ≤ x/L at one of those L looks, which happens with probability at most x for trials symmetric about no
 * change. At and above RESOLVED_P it is the anytime p-value, unchanged: every level a design reads at α = 0.01
 * with up to ten judged metrics, and at α = 0.05 with up to fifty.
 */
export function resolvedPValue(anytime: number, flipP: () => number, looks: number): number {
  if (!(anytime < RESOLVED_P)) return anytime;
  return Math.max(anytime, Math.min(RESOLVED_P, looks * flipP()));
}

/** How many looks from `from` to `to` have 2/2ⁿ below RESOLVED_P (the others' flips cannot go below it). */
export function looksBelowResolution(from: number, to: number): number {
  let looks = 0;
  for (let n = Math.max(1, from); n <= to; n++) if (2 / 2 ** n < RESOLVED_P) looks++;
  return Math.max(1, looks);
}
