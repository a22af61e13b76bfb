/**
 * Sequential judging of per-trial effects: one look after every completed
 * trial from `minTrials` to `maxTrials`, with a false-positive rate that holds
 * under those repeated looks.
 *
 * Each look fits the crossover model effect_i = δ + β·slot_i + ε_i (slot bias β
 * removed in every trial, balanced or not; effects on the log scale for ratios,
 * verdict.ts) and gives a t statistic for δ, its standard error widened for
 * serial correlation between trials, with its nominal two-sided p-value q; no
 * look is taken under MIN_DF residual degrees of freedom. The design is a group-sequential test with a
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
 * An A/A calibration is deliberately not pooled into the test: pooling its
 * noise gains degrees of freedom only when the experiment is as noisy as
 * calibrated. It gives the serial correlation when it measured a material one,
 * a floor under the standard error (verdict.ts, withNoiseFloor: it only widens),
 * and planning: the noise floor, the trials a change needs, and a warning when
 * an experiment is noisier than calibrated (docs/harness.md, Inference).
 */
import { seededRandom } from '../core/index.js';
import { studentTCdf, studentTQuantile } from './stats.js';

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
  /** Lag-1 autocorrelation of the trials the standard error allowed for (0: none). */
  readonly autocorrelation: number;
  /** The standard error is the A/A calibration's floor, not the trials' own (verdict.ts, withNoiseFloor). */
  readonly calibratedFloor?: boolean;
}

/** Effects that differ by less than this are the same number (float dust, not noise). */
export const EXACT_TOLERANCE = 1e-9;

export function nominalP(estimate: number, standardError: number, df: number): number {
  if (standardError === 0) return Math.abs(estimate) <= EXACT_TOLERANCE ? 1 : 0;
  return Math.min(1, 2 * (1 - studentTCdf(Math.abs(estimate / standardError), df)));
}

/**
 * No look is taken with fewer residual degrees of freedom than this: a variance from 2 df is below a tenth of
 * the truth one time in ten, and the first look of a 4-trial crossover (2 df once the slot bias is fitted) let
 * two slow processes in one slot be absorbed by the slot term and a regression pass. With 4 df that chance is
 * under 2%, and the t quantile at the sequential level is finite enough to decide.
 */
export const MIN_DF = 4;

/**
 * How the judge allows for serial correlation between trials (drift that persists from one trial to the next):
 * `own` estimates the lag-1 autocorrelation from the look's own residuals (bias-corrected, clamped to
 * [0, 0.9]), `given` takes it from an A/A calibration that measured it over many more trials.
 */
export type SerialCorrelation = { readonly kind: 'own' } | { readonly kind: 'given'; readonly rho: number };

/**
 * n·Var(mean)/σ² for an AR(1) sequence with lag-1 correlation ρ, n terms: 1 + 2 Σ_{k<n} (1 − k/n) ρ^k. The
 * factor by which correlated trials widen the interval of their mean (3 at ρ = 0.5 for long runs).
 */
export function ar1VarianceFactor(rho: number, n: number): number {
  if (rho === 0 || n < 2) return 1;
  // The closed form of the sum: 1 + 2ρ/(1 − ρ) − 2ρ(1 − ρⁿ)/(n(1 − ρ)²).
  return 1 + (2 * rho) / (1 - rho) - (2 * rho * (1 - rho ** n)) / (n * (1 - rho) ** 2);
}

/**
 * How much a residual variance from n serially correlated trials understates the variance of their mean:
 * the AR(1) factor, and the part of it the p fitted means absorbed (E[s²] = σ²(n − p·f)/(n − p)).
 */
export function varianceInflation(rho: number, n: number, parameters: number): number {
  const f = rho > 0 ? ar1VarianceFactor(rho, n) : 1;
  if (f === 1) return 1;
  const df = n - parameters;
  return (f * df) / Math.max(n - parameters * f, 0.25 * df);
}

/**
 * The standard error a look at n balanced trials will have, from a per-trial sd and lag-1 correlation (an A/A
 * calibration's): the noise floor, the trials a change needs and the verdict's planning all use this one.
 */
export function plannedStandardError(sd: number, rho: number, n: number, slotted: boolean): number {
  return (sd * Math.sqrt(varianceInflation(rho, n, slotted ? 2 : 1))) / Math.sqrt(n);
}

/** Lag-1 autocorrelation of residuals in trial order (0 when they have no spread). */
export function lagOneAutocorrelation(residuals: readonly number[]): number {
  let ss = 0;
  let cross = 0;
  for (let i = 0; i < residuals.length; i++) {
    ss += residuals[i]! ** 2;
    if (i > 0) cross += residuals[i]! * residuals[i - 1]!;
  }
  return ss > 0 ? cross / ss : 0;
}

/**
 * The looks of one metric, one trial at a time (the judge and the boundary's simulation share it, so the
 * boundary is the law of exactly what judges). `sign` is +1 when the treatment ran in slot A in that trial, −1
 * in slot B, 0 when the arms have no slots (URLs). The slot term is fitted when both slots occur and every trial
 * has a slot; `fit()` is undefined while fewer than MIN_DF residual degrees of freedom remain.
 *
 * The standard error allows for serial correlation: the residual variance is scaled by the AR(1) factor of
 * the mean, corrected for the part of it the estimated means absorb (E[s²] = σ²(n − p·f)/(n − p) for p
 * fitted means), so positively correlated trials widen the interval as they should instead of inflating the
 * false-positive rate (Box, Jenkins & Reinsel, Time Series Analysis, §2.1.5; Kalibera & Jones 2013).
 */
export class LookAccumulator {
  // Running sums, so a look costs the same at trial 1,000 as at trial 4 (the boundary simulates 8,000 sequences).
  readonly #sum = new Map<number, number>();
  readonly #count = new Map<number, number>();
  readonly #squares = new Map<number, number>();
  // Per (sign of trial i, sign of trial i−1): count, Σ eᵢ, Σ eᵢ₋₁, Σ eᵢ·eᵢ₋₁ — the lag-1 cross product of the
  // residuals for whichever means the look fits.
  readonly #lagged = new Map<string, { a: number; b: number; count: number; current: number; previous: number; product: number }>();
  #n = 0;
  #min = Infinity;
  #max = -Infinity;
  #last: { effect: number; sign: number } | undefined;
  constructor(readonly serial: SerialCorrelation = { kind: 'own' }) {}

  add(effect: number, sign: number): void {
    const s = sign === 1 ? 1 : sign === -1 ? -1 : 0;
    this.#n++;
    this.#sum.set(s, (this.#sum.get(s) ?? 0) + effect);
    this.#count.set(s, (this.#count.get(s) ?? 0) + 1);
    this.#squares.set(s, (this.#squares.get(s) ?? 0) + effect * effect);
    if (effect < this.#min) this.#min = effect;
    if (effect > this.#max) this.#max = effect;
    if (this.#last) {
      const key = `${s}|${this.#last.sign}`;
      const entry = this.#lagged.get(key) ?? { a: s, b: this.#last.sign, count: 0, current: 0, previous: 0, product: 0 };
      entry.count++;
      entry.current += effect;
      entry.previous += this.#last.effect;
      entry.product += effect * this.#last.effect;
      this.#lagged.set(key, entry);
    }
    this.#last = { effect, sign: s };
  }

  fit(): LookFit | undefined {
    const n = this.#n;
    if (n < 1) return undefined;
    const plusCount = this.#count.get(1) ?? 0;
    const minusCount = this.#count.get(-1) ?? 0;
    const total = (this.#sum.get(1) ?? 0) + (this.#sum.get(-1) ?? 0) + (this.#sum.get(0) ?? 0);
    const mean = total / n;
    const slotted = plusCount > 0 && minusCount > 0 && plusCount + minusCount === n && n >= 3;
    const plusMean = (this.#sum.get(1) ?? 0) / Math.max(1, plusCount);
    const minusMean = (this.#sum.get(-1) ?? 0) / Math.max(1, minusCount);
    // OLS with an intercept and a ±1 slot regressor: δ is the average of the two slot means, β half their difference.
    const estimate = slotted ? (plusMean + minusMean) / 2 : mean;
    const slotBias = slotted ? (plusMean - minusMean) / 2 : undefined;
    const withBias = slotBias !== undefined ? { slotBias } : {};
    const parameters = slotted ? 2 : 1;
    const df = n - parameters;
    // Identical effects in every trial (a deterministic counter): the effect is known exactly.
    if (this.#max - this.#min <= EXACT_TOLERANCE && n >= 2) return { n, estimate, standardError: 0, sd: 0, df, ...withBias, noise: 'exact (no variation)', q: nominalP(estimate, 0, 1), autocorrelation: 0 };
    if (df < MIN_DF) return undefined;
    const fitted = (sign: number): number => (slotted ? (sign === 1 ? plusMean : minusMean) : mean);
    let ss = 0;
    for (const [sign, count] of this.#count) {
      const m = fitted(sign);
      ss += (this.#squares.get(sign) ?? 0) - 2 * m * (this.#sum.get(sign) ?? 0) + count * m * m;
    }
    ss = Math.max(0, ss);
    let cross = 0;
    for (const e of this.#lagged.values()) cross += e.product - fitted(e.b) * e.current - fitted(e.a) * e.previous + e.count * fitted(e.a) * fitted(e.b);
    const sd = Math.sqrt(ss / df);
    const factor = slotted ? 0.5 * Math.sqrt(1 / plusCount + 1 / minusCount) : 1 / Math.sqrt(n);
    const rho = this.serial.kind === 'given' ? this.serial.rho : ownRho(ss > 0 ? cross / ss : 0, n);
    const standardError = sd * Math.sqrt(varianceInflation(rho, n, parameters)) * factor;
    return { n, estimate, standardError, sd, df, ...withBias, noise: 'own trials', q: nominalP(estimate, standardError, df), autocorrelation: rho };
  }
}

/**
 * The look's own lag-1 autocorrelation, corrected for its small-sample bias (E[r₁] ≈ ρ − (1 + 3ρ)/n for a
 * mean estimated from the same n values; Marriott & Pope 1954) and clamped to [0, 0.9]: negative correlation
 * would narrow the interval, and the boundary is simulated with this very estimate inside it.
 */
function ownRho(r1: number, n: number): number {
  const corrected = (n * r1 + 1) / (n - 3);
  return Math.min(0.9, Math.max(0, Number.isFinite(corrected) ? corrected : 0));
}

/** One look at the first `n` effects (see LookAccumulator). */
export function fitLook(effects: readonly number[], signs: readonly number[], n: number, serial?: SerialCorrelation): LookFit | undefined {
  const looks = new LookAccumulator(serial);
  for (let i = 0; i < n; i++) looks.add(effects[i]!, signs[i] ?? 0);
  return looks.fit();
}

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
    const looks = new LookAccumulator(design.serial === 'given' ? { kind: 'given', rho: 0 } : { kind: 'own' });
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
  const normalized: SequentialDesign = { minTrials, maxTrials: Math.max(minTrials, design.maxTrials), slotted: design.slotted, serial: design.serial ?? 'own' };
  const key = `${normalized.minTrials}|${normalized.maxTrials}|${normalized.slotted}|${normalized.serial}`;
  const cached = boundaries.get(key);
  if (cached) return cached;
  // One look with a given correlation is an ordinary t-test: its level is exact, no simulation needed. With its own
  // correlation estimate inside, even one look's law is simulated.
  const single = normalized.minTrials === normalized.maxTrials && normalized.serial === 'given';
  const law = single ? new Float64Array(0) : simulateMinQ(normalized, 0x5eed + normalized.maxTrials * 7_919 + normalized.minTrials * 31 + (normalized.slotted ? 1 : 0) + (normalized.serial === 'given' ? 2 : 0));
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
