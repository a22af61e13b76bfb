/**
 * Which judged metrics Benjamini–Hochberg counts: only those that could be significant at all (Tarone, "A modified
 * Bonferroni method for discrete data", Biometrics 1990; Gilbert, "A modified false discovery rate
 * multiple-comparisons procedure for discrete data", Stat. Prob. Letters 2005, for Benjamini–Hochberg).
 *
 * A judged metric's p-value is never below its trials' sign-flip p-value (flip-checked-look.ts), and that is never
 * below 2/2ᵏ, k counting the trials where the metric moved at all (sign-flip.ts, smallestSignFlipP). Given which
 * trials moved, no sign pattern gets lower. A rare metric can therefore not be significant for many trials: with
 * 0.1% of requests failing and 200 pairs a trial, two trials in three have no failure in either arm, and the error
 * share moved in some five of the first fifteen, so its p-value could not go below 2/2⁵ = 0.0625. Counted anyway,
 * it made a lone latency regression need a third of α instead of a half while it could reject nothing itself.
 *
 * Tarone's rule: the smallest K for which at most K metrics could reach α/K; the family is those, and each p-value
 * is adjusted as if K had been tested (BH over K, of which the left-out ones could reject nothing). A left-out
 * metric's own p-value is above α/K, so its adjusted p-value, p·K, is above α: it is never significant. Which
 * trials moved is the flips' conditioning (their sizes), not their signs, so choosing the family on it spends no α:
 * under no change each member's p-value keeps its law given the sizes.
 */
import { benjaminiHochberg } from '../stats.js';

export interface FamilyCandidate {
  readonly pValue: number;
  /** The smallest p-value the metric could have had on its trials (1 when it cannot move, 0 when unknown). */
  readonly smallestP: number;
}

export interface TestedFamily<T> {
  /** The metrics that could reach their share of α, adjusted among themselves. */
  readonly tested: readonly T[];
  /** Tarone's K: how many hypotheses each adjustment counts (at least the family's size). */
  readonly size: number;
  /** Each candidate's adjusted p-value, in the candidates' order. */
  readonly adjusted: readonly number[];
}

export function testedFamily<T extends FamilyCandidate>(candidates: readonly T[], alpha: number): TestedFamily<T> {
  // At k = the number of candidates at most k can reach α/k, so the loop always settles (none: an empty family).
  let size = 0;
  let tested: readonly T[] = [];
  for (let k = 1; k <= candidates.length; k++) {
    const reachable = candidates.filter((c) => c.smallestP <= alpha / k);
    if (reachable.length <= k) {
      size = k;
      tested = reachable;
      break;
    }
  }
  const inFamily = benjaminiHochberg(
    tested.map((c) => c.pValue),
    size,
  );
  const adjustedOf = new Map(tested.map((c, i) => [c, inFamily[i]!] as const));
  return { tested, size, adjusted: candidates.map((c) => adjustedOf.get(c) ?? Math.min(1, c.pValue * Math.max(1, size))) };
}
