/**
 * Sequential judging of per-trial effects: one look after every completed
 * trial from `minTrials` to `maxTrials`, with a false-positive rate that holds
 * under those repeated looks.
 *
 * Each look fits the crossover model effect_i = δ + β·slot_i + ε_i (slot bias β
 * removed in every trial, balanced or not) and gives a t statistic for δ with
 * its nominal two-sided p-value q. The design is a group-sequential test with a
 * constant nominal level (Pocock 1977; Jennison & Turnbull 2000, ch. 2): the
 * experiment rejects at the first look whose q falls below α*, where α* is set
 * so that P(min over looks of q < α*) = α under no change. Because the t
 * statistics are pivotal (their joint null law depends on neither σ nor β), the
 * law of min q is found once per design by a seeded simulation of the very
 * code that judges (`LookAccumulator`), and cached. Inverting the same boundary
 * gives a confidence sequence (intervals valid simultaneously at every look)
 * and an anytime-valid p-value (Howard et al. 2021, §2; Lindon et al. 2022 use
 * the same guarantee for Netflix's sequential canaries).
 *
 * An A/A calibration is deliberately not pooled into the test. Pooling its
 * noise estimate gains degrees of freedom only when the experiment is as noisy
 * as calibrated; a boundary that keeps the false-positive rate for every
 * ratio of true to calibrated noise loses more than pooling gains (docs/harness.md,
 * Inference, point 5). The calibration serves planning instead: the noise
 * floor, the trials a change needs, and a warning when an experiment is
 * noisier than calibrated.
 */
import { seededRandom } from '../../../core/index.js';
import { studentTCdf, studentTQuantile } from '../../../harness/stats.js';

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
}

/** Effects that differ by less than this are the same number (float dust, not noise). */
export const EXACT_TOLERANCE = 1e-9;

function nominalP(estimate: number, standardError: number, df: number): number {
  if (standardError === 0) return Math.abs(estimate) <= EXACT_TOLERANCE ? 1 : 0;
  return Math.min(1, 2 * (1 - studentTCdf(Math.abs(estimate / standardError), df)));
}

/** Count, mean and sum of squared deviations of a stream (Welford): one update per trial, numerically stable. */
class RunningMoments {
  count = 0;
  mean = 0;
  m2 = 0;
  add(value: number): void {
    this.count++;
    const delta = value - this.mean;
    this.mean += delta / this.count;
    this.m2 += delta * (value - this.mean);
  }
}

/**
 * The looks of one metric, one trial at a time (the judge and the boundary's simulation share it, so the
 * boundary is the law of exactly what judges). `sign` is +1 when the treatment ran in slot A in that trial, −1
 * in slot B, 0 when the arms have no slots (URLs). The slot term is fitted when both slots occur, every trial
 * has a slot and a degree of freedom remains; `fit()` is undefined while no degree of freedom is left.
 */
export class LookAccumulator {
  readonly #all = new RunningMoments();
  readonly #plus = new RunningMoments();
  readonly #minus = new RunningMoments();
  #min = Infinity;
  #max = -Infinity;

  add(effect: number, sign: number): void {
    this.#all.add(effect);
    if (sign === 1) this.#plus.add(effect);
    else if (sign === -1) this.#minus.add(effect);
    if (effect < this.#min) this.#min = effect;
    if (effect > this.#max) this.#max = effect;
  }

  fit(): LookFit | undefined {
    const n = this.#all.count;
    if (n < 1) return undefined;
    const plus = this.#plus;
    const minus = this.#minus;
    const slotted = plus.count > 0 && minus.count > 0 && plus.count + minus.count === n && n >= 3;
    // OLS with an intercept and a ±1 slot regressor: δ is the average of the two slot means, β half their difference.
    const estimate = slotted ? (plus.mean + minus.mean) / 2 : this.#all.mean;
    const slotBias = slotted ? (plus.mean - minus.mean) / 2 : undefined;
    const factor = slotted ? 0.5 * Math.sqrt(1 / plus.count + 1 / minus.count) : 1 / Math.sqrt(n);
    const ss = slotted ? plus.m2 + minus.m2 : this.#all.m2;
    const df = n - (slotted ? 2 : 1);
    const withBias = slotBias !== undefined ? { slotBias } : {};
    // Identical effects in every trial (a deterministic counter): the effect is known exactly.
    if (this.#max - this.#min <= EXACT_TOLERANCE && n >= 2)
      return { n, estimate, standardError: 0, sd: 0, df, ...withBias, noise: 'exact (no variation)', q: nominalP(estimate, 0, 1) };
    if (df < 1) return undefined;
    const sd = Math.sqrt(Math.max(0, ss) / df);
    const standardError = sd * factor;
    return { n, estimate, standardError, sd, df, ...withBias, noise: 'own trials', q: nominalP(estimate, standardError, df) };
  }
}

/** One look at the first `n` effects (see LookAccumulator). */
export function fitLook(effects: readonly number[], signs: readonly number[], n: number): LookFit | undefined {
  const looks = new LookAccumulator();
  for (let i = 0; i < n; i++) looks.add(effects[i]!, signs[i] ?? 0);
  return looks.fit();
}

/** What fixes the law of the looks: when they happen and whether slots are fitted. */
export interface SequentialDesign {
  readonly minTrials: number;
  readonly maxTrials: number;
  /** Arms with crossover slots (deployed per trial): slots alternate from trial to trial. */
  readonly slotted: boolean;
}

export interface Boundary {
  readonly design: SequentialDesign;
  /** The nominal per-look level α* that keeps the whole sequence at `level`. */
  nominalLevel(level: number): number;
  /** P(some look's q ≤ `minQ`) under no change: a p-value valid however many looks were taken. */
  anytimeP(minQ: number): number;
}

/** Sequences simulated per design: the 5% quantile of min q is then known to about ±5% of itself. */
const SIMULATIONS = 8_000;
const boundaries = new Map<string, Boundary>();

/** Standard normal deviates by Box–Muller from a seeded stream. */
function gaussian(random: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

function simulateMinQ(design: SequentialDesign, seed: number): Float64Array {
  const z = gaussian(seededRandom(seed));
  const mins = new Float64Array(SIMULATIONS);
  for (let s = 0; s < SIMULATIONS; s++) {
    const looks = new LookAccumulator();
    let minQ = 1;
    for (let n = 1; n <= design.maxTrials; n++) {
      looks.add(z(), design.slotted ? (n % 2 === 1 ? -1 : 1) : 0);
      if (n < design.minTrials) continue;
      const look = looks.fit();
      if (look && look.q < minQ) minQ = look.q;
    }
    mins[s] = minQ;
  }
  return mins.sort();
}

/** The boundary of a design, simulated once per process (seeded: the same design always gets the same boundary). */
export function sequentialBoundary(design: SequentialDesign): Boundary {
  const minTrials = Math.max(2, Math.min(design.minTrials, design.maxTrials));
  const normalized: SequentialDesign = { minTrials, maxTrials: Math.max(minTrials, design.maxTrials), slotted: design.slotted };
  const key = `${normalized.minTrials}|${normalized.maxTrials}|${normalized.slotted}`;
  const cached = boundaries.get(key);
  if (cached) return cached;
  // One look is an ordinary t-test: its level is exact, no simulation needed.
  const single = normalized.minTrials === normalized.maxTrials;
  const law = single
    ? new Float64Array(0)
    : simulateMinQ(normalized, 0x5eed + normalized.maxTrials * 7_919 + normalized.minTrials * 31 + (normalized.slotted ? 1 : 0));
  const boundary: Boundary = {
    design: normalized,
    nominalLevel: (level) => (single ? level : lowerQuantile(law, level)),
    anytimeP: (minQ) => (single ? minQ : (countAtMost(law, minQ) + 1) / (law.length + 1)),
  };
  if (boundaries.size < 1_000) boundaries.set(key, boundary);
  return boundary;
}

/** The largest value v of the sorted law with P(X < v) ≤ level. */
function lowerQuantile(sorted: Float64Array, level: number): number {
  const index = Math.floor(level * sorted.length);
  return index >= sorted.length ? 1 : sorted[index]!;
}

function countAtMost(sorted: Float64Array, value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (sorted[mid]! <= value) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** Half-width multiplier of the confidence sequence at a look: the t quantile at the design's nominal level. */
export function criticalValue(boundary: Boundary, level: number, df: number): number {
  return studentTQuantile(1 - boundary.nominalLevel(level) / 2, Math.max(1, df));
}
