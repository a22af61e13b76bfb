/**
 * The model to beat: a Kayenta-style judge of one metric. All control and
 * all treatment values are pooled (trials and pairing ignored), compared
 * with a Mann–Whitney U test, and the shift is the Hodges–Lehmann estimate
 * relative to the control median; a regression needs p < alpha *and* a
 * shift beyond the effect-size floor (Kayenta's tolerance).
 */
import { seededRandom } from '../../core/index.js';

export interface KayentaResult {
  readonly pValue: number;
  /** Hodges–Lehmann shift over the control median. */
  readonly relativeShift: number;
  readonly verdict: 'regression' | 'improvement' | 'pass';
}

/** Standard normal CDF (Abramowitz–Stegun 7.1.26 via erf). */
function normalCdf(x: number): number {
  const t = 1 / (1 + (0.3275911 * Math.abs(x)) / Math.SQRT2);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-(x * x) / 2);
  return x >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}

export function kayentaJudge(control: readonly number[], treatment: readonly number[], options: { alpha: number; floor: number; seed: number }): KayentaResult {
  const n1 = control.length;
  const n2 = treatment.length;
  const all = [...control.map((v) => [v, 0] as const), ...treatment.map((v) => [v, 1] as const)].sort((a, b) => a[0] - b[0]);
  let rankSumTreatment = 0;
  let tieTerm = 0;
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j + 1 < all.length && all[j + 1]![0] === all[i]![0]) j++;
    const rank = (i + j + 2) / 2;
    const ties = j - i + 1;
    if (ties > 1) tieTerm += ties ** 3 - ties;
    for (let k = i; k <= j; k++) if (all[k]![1] === 1) rankSumTreatment += rank;
    i = j + 1;
  }
  const u = rankSumTreatment - (n2 * (n2 + 1)) / 2;
  const mean = (n1 * n2) / 2;
  const sd = Math.sqrt(((n1 * n2) / 12) * (n1 + n2 + 1 - tieTerm / ((n1 + n2) * (n1 + n2 - 1))));
  const zScore = (u - mean) / sd;
  const pValue = 2 * (1 - normalCdf(Math.abs(zScore)));
  // Hodges–Lehmann: median of pairwise differences, from a seeded sample of pairs (all n1 x n2 would be millions).
  const random = seededRandom(options.seed);
  const differences = Array.from({ length: 20_000 }, () => treatment[Math.floor(random() * n2)]! - control[Math.floor(random() * n1)]!).sort((a, b) => a - b);
  const sortedControl = [...control].sort((a, b) => a - b);
  const relativeShift = differences[differences.length >> 1]! / sortedControl[sortedControl.length >> 1]!;
  const verdict = pValue < options.alpha && Math.abs(relativeShift) >= options.floor ? (relativeShift > 0 ? 'regression' : 'improvement') : 'pass';
  return { pValue, relativeShift, verdict };
}
