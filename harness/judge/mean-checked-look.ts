/**
 * A look that would pass a metric ("no change": its interval excludes a regression beyond the threshold) must
 * pass it about the trials' mean too. The look's M-estimate (huber-looks.ts) is robust: a trial far out weighs at
 * most k scales. That is right for a symmetric lottery (a fresh process of either arm slow for its whole life) and
 * the wrong claim about an asymmetric one: a change that slows every process in some trials only leaves the
 * M-estimate near zero. What the fleet pays is the mean over trials, but the mean's own interval cannot be had in
 * tens of trials where processes are a lottery. So the pass is judged on the M-estimate's interval moved to the
 * mean where the mean is worse: trials that lean to the bad side count in full, and a symmetric lottery, whose
 * outliers cancel in the mean, costs little. This only ever withholds passes; it never makes one
 * (docs/design/judge.md §7).
 */
import { toInference } from '../metrics/effect-scale.js';
import type { EffectScale } from '../metrics/trial-metrics.js';
import type { LookFit } from './look-fit.js';
import type { MetricPolicy } from '../metrics/metric-policy.js';

/** The trials' mean and its interval on the inference scale, when it withheld a pass. */
export interface MeanBound {
  readonly estimate: number;
  readonly low: number;
  readonly high: number;
}

/**
 * `fit` with its standard error widened until its interval reaches each threshold that the same interval about the
 * trials' mean (`mean`, least squares on the same trials and slots) does not exclude.
 */
export function meanChecked(
  fit: LookFit,
  mean: LookFit | undefined,
  critical: number,
  policy: MetricPolicy | undefined,
  scale: EffectScale,
): LookFit & { readonly meanBound?: MeanBound } {
  if (policy === undefined || mean === undefined || fit.noise !== 'own trials') return fit;
  const limits: number[] = [];
  if (policy.direction !== 'decrease-is-bad') limits.push(toInference(policy.threshold, scale));
  if (policy.direction !== 'increase-is-bad') limits.push(toInference(-policy.threshold, scale));
  let checked: LookFit & { meanBound?: MeanBound } = fit;
  const half = critical * fit.standardError;
  for (const limit of limits) {
    if (!Number.isFinite(limit)) continue;
    const reach = critical * checked.standardError;
    // The side of the limit the look's interval lies on; the interval about the mean must lie there too.
    const below = limit > checked.estimate;
    const excluded = below ? checked.estimate + reach < limit : checked.estimate - reach > limit;
    if (!excluded) continue;
    const meanExcludes = below ? mean.estimate + half < limit : mean.estimate - half > limit;
    if (meanExcludes) continue;
    // Just past the threshold, so that "lies below it" cannot hold by float dust.
    const reaching = (Math.abs(limit - checked.estimate) / critical) * (1 + 1e-9);
    checked = {
      ...checked,
      standardError: Math.max(checked.standardError, reaching),
      meanBound: { estimate: mean.estimate, low: mean.estimate - half, high: mean.estimate + half },
    };
  }
  return checked;
}
