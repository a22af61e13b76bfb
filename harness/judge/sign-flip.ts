/**
 * A look's randomization check: before the judge calls an effect significant, the trials' signs are flipped in
 * every way they could have fallen, and the effect must stand out among those flips too.
 *
 * Why: the boundary is simulated on Gaussian trials, and a look's t statistic estimates the noise from the trials
 * in hand. Real per-trial effects can cluster instead: a fresh process's memory is near a few levels (whether V8
 * has grown its young generation yet), so an A/A trial's RSS effect is about 0 or about ±11% with little in
 * between. Seven trials with the three in one slot at +11% and the four in the other at 0 are fitted as +5.5% of
 * effect and +5.5% of slot bias with residuals of the levels' own spread: a tiny standard error. Simulated through
 * the judge with one process per arm (a process grown with probability 0.15–0.5, 0.5% spread within a level), an
 * identical build was judged regressed 1.4–3.2% of the time at α = 0.01; the demo's clean change was judged
 * regressed on rss_bytes twice in CI (+4.7% [+2.4%, +6.9%] after 7 trials).
 *
 * What: under no change, a trial's effect is the slot bias plus noise symmetric about zero (the arms are the same
 * build; which arm a trial's slot holds alternates). Given the noise's sizes |xᵢ|, its signs are then fair coins,
 * and the share of sign patterns whose statistic is at least the observed one is a p-value that needs no Gaussian
 * law (Fisher's randomization test; Efron, "Student's t-test under symmetry conditions", JASA 1969). The statistic
 * is Huber's score Σ ψ(xᵢ/s), with ψ(u) = max(−k, min(k, u)) as the looks use and a scale s from the sizes alone
 * (1.4826 × median |xᵢ|), so the flips do not change it: a trial far out counts k, not its size, as in the look.
 * Each |ψᵢ| is put on a grid of k/GRID and the law of Σ ±|ψᵢ| is computed exactly by convolution (O(n² · GRID)):
 * the p-value is exact for that statistic at any n, down to 2/2ⁿ, with no Monte Carlo error — the demo's looks
 * need levels near 3·10⁻⁴, which a thousand random flips could not resolve.
 *
 * With the slot term, the noise is taken about the slot bias estimated under no change, as the restricted wild
 * bootstrap does with Rademacher weights (Davidson & Flachaire, "The wild bootstrap, tamed at last", J.
 * Econometrics 2008): exact without slots, nearly so with them. That estimate is the mean of the two slots'
 * medians of sign × effect, each the slot bias under no change. One median over all trials (until 2026-12-04) was
 * set by the majority slot at an odd look: a real change δ made the majority's sign × effect β + δ and the
 * minority's β − δ, the median took β + δ for the bias, and the majority's trials were left with no effect, so
 * nine trials at +10% flipped to 2/2⁸ instead of 2/2⁹ and no odd look decided what the next even one did.
 *
 * Its smallest p-value is 2/2ⁿ (all trials one way), so with few trials nothing can be significant at a small α:
 * that is the honest answer, not a defect.
 */
import { SCALE_K } from './huber-looks.js';
import { quantileOf } from '../stats.js';

/**
 * A trial's weight |ψ| is clipped at this many scales: the looks' scale constant (huber-looks.ts), so a trial far
 * out weighs at most 1.345 scales against a clean trial's typical 0.67, as before the looks' own k moved to 2.
 */
const FLIP_K = SCALE_K;
/** |ψ| is counted in steps of FLIP_K / GRID (a trial's weight to about 0.4%). */
export const GRID = 256;

const medianOf = (values: readonly number[]): number => quantileOf(values, 0.5);

/** Which tail a sign-flip p-value counts: both, or only sign patterns at most (`below`) or at least (`above`) the observed. */
export type FlipTail = 'two-sided' | 'below' | 'above';

/**
 * The sign-flip p-value of no effect for per-trial `effects` with their slot signs (+1/−1, or 0 without slots):
 * two-sided, P(|Σ wᵢ aᵢ| ≥ |Σ sign(xᵢ) aᵢ|) over independent fair signs wᵢ, aᵢ being |ψ(xᵢ/s)| on the grid; one-sided
 * (`below`/`above`), the share of patterns on the observed side of it, as a one-sided test of an equivalence bound
 * takes it (Schuirmann 1987). Never 0.
 */
export function signFlipP(effects: readonly number[], signs: readonly number[], tail: FlipTail = 'two-sided'): number {
  const flips = flipSteps(effects, signs);
  if (!flips) return 1;
  const { steps, noise } = flips;
  const signed = noise.reduce((sum, x, i) => sum + Math.sign(x) * steps[i]!, 0);
  const observed = Math.abs(signed);
  const total = steps.reduce((a, b) => a + b, 0);
  if (tail === 'two-sided' && observed === 0) return 1;
  // law[j] = P(Σ wᵢ aᵢ = j − total) after each trial's coin, convolved in.
  let law = new Float64Array(2 * total + 1);
  law[total] = 1;
  let reach = 0;
  for (const step of steps) {
    if (step === 0) continue;
    const next = new Float64Array(law.length);
    for (let j = total - reach; j <= total + reach; j++) {
      const mass = law[j]!;
      if (mass === 0) continue;
      next[j - step] = next[j - step]! + mass / 2;
      next[j + step] = next[j + step]! + mass / 2;
    }
    law = next;
    reach += step;
  }
  let tailMass = 0;
  if (tail !== 'above') for (let j = 0; j <= total - (tail === 'below' ? -signed : observed); j++) tailMass += law[j]!;
  if (tail !== 'below') for (let j = total + (tail === 'above' ? signed : observed); j < law.length; j++) tailMass += law[j]!;
  return Math.min(1, tailMass);
}

/**
 * The smallest p-value signFlipP could give these trials' sizes, whatever their signs: 2/2ᵏ, k counting the trials
 * whose |ψ| is not zero on the grid (a trial of no effect flips to itself). Given the sizes, no sign pattern goes
 * below it, so a metric whose smallest exceeds the level it would need cannot be significant (verdict.ts, Tarone).
 */
export function smallestSignFlipP(effects: readonly number[], signs: readonly number[]): number {
  const flips = flipSteps(effects, signs);
  if (!flips) return 1;
  const moving = flips.steps.filter((step) => step > 0).length;
  return Math.min(1, 2 / 2 ** moving);
}

/** Each trial's noise about the slot bias under no change, and its |ψ| on the grid; none when there is no spread. */
function flipSteps(effects: readonly number[], signs: readonly number[]): { steps: number[]; noise: number[] } | undefined {
  const slotted = signs.some((s) => s === 1) && signs.some((s) => s === -1);
  const slotBias = slotted ? (medianOf(effects.filter((_, i) => signs[i] === 1)) - medianOf(effects.filter((_, i) => signs[i] === -1))) / 2 : 0;
  const noise = effects.map((e, i) => e - (signs[i] ?? 0) * slotBias).filter(Number.isFinite);
  const sizes = noise.map(Math.abs);
  // The scale from the sizes alone, so every sign pattern has the same one; a majority of exact zeros falls back
  // to the mean size (still the same under flips).
  const median = medianOf(sizes);
  const scale = median > 0 ? 1.4826 * median : sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length);
  if (!(scale > 0)) return undefined;
  return { noise, steps: sizes.map((size) => Math.round((Math.min(FLIP_K, size / scale) / FLIP_K) * GRID)) };
}

/** The fewest trials whose flips can give a p-value below `level` (their smallest is 2/2ⁿ): planning's floor. */
export function fewestTrialsForFlips(level: number): number {
  return level > 0 ? Math.max(1, Math.floor(Math.log2(2 / level)) + 1) : Number.POSITIVE_INFINITY;
}
