/**
 * The scale inference works on. Ratio metrics are judged on the log scale: log(treatment / control) is
 * centred on zero when nothing changed, where the mean of treatment / control − 1 is pulled up by a noisy
 * control (Jensen: +0.55% under A/A with bimodal processes, half a 1% threshold), and a halving and a
 * doubling weigh the same. Estimates and intervals are turned back into relative changes for people.
 */
import type { EffectScale } from './trial-metrics.js';

/** A per-trial effect on the inference scale: log1p of a relative change, a share difference as it is. */
export const toInference = (effect: number, scale: EffectScale): number => (scale === 'relative' ? (effect > -1 ? Math.log1p(effect) : Number.NaN) : effect);

/** Back from the inference scale to the metric's own. */
export const fromInference = (value: number, scale: EffectScale): number => (scale === 'relative' ? Math.expm1(value) : value);
