import { EXACT_TOLERANCE, MIN_DF, nominalP, ownRho, varianceInflation, type LookAccumulator, type LookFit, type SerialCorrelation } from './look-fit.js';

/**
 * The looks of one metric by least squares (LookAccumulator): δ is the average of the two slot means, the noise
 * the residuals' sd. Kept as the verdict bench's baseline for the judge's M-estimate (harness/judge/huber-looks.ts).
 *
 * The standard error allows for serial correlation: the residual variance is scaled by the AR(1) factor of
 * the mean, corrected for the part of it the estimated means absorb (E[s²] = σ²(n − p·f)/(n − p) for p
 * fitted means), so positively correlated trials widen the interval as they should instead of inflating the
 * false-positive rate (Box, Jenkins & Reinsel, Time Series Analysis, §2.1.5; Kalibera & Jones 2013).
 */
export class MeanLooks implements LookAccumulator {
  // Running sums, so a look costs the same at trial 1,000 as at trial 4 (the boundary simulates 16,000 sequences).
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
    if (this.#max - this.#min <= EXACT_TOLERANCE && n >= 2)
      return { n, estimate, standardError: 0, sd: 0, df, ...withBias, noise: 'exact (no variation)', q: nominalP(estimate, 0, 1), autocorrelation: 0 };
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
