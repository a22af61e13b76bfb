/**
 * The statistics the verdict rests on. The unit of inference is the trial:
 * requests inside one trial share time, machines and drift, so they are not
 * independent draws. Each trial yields one paired effect; across trials a
 * Student-t interval gives the estimate, its 95% interval and a p-value that
 * can reach significance with 5 trials (an exact signed-rank test on 5
 * points cannot go below p = 0.0625). Benjamini–Hochberg adjusts across the
 * metrics of one experiment. Resampling is seeded and reproducible.
 */
import { gammaln, mean, quantileSorted, sampleStandardDeviation } from 'simple-statistics';
import { InternalError, seededRandom } from '../core/index.js';

/** Continued fraction of the regularized incomplete beta function (Numerical Recipes 6.4, modified Lentz). */
function betaContinuedFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-15) break;
  }
  return h;
}

/** I_x(a, b), the regularized incomplete beta function. */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(gammaln(a + b) - gammaln(a) - gammaln(b) + a * Math.log(x) + b * Math.log(1 - x));
  // The continued fraction converges fast only below (a + 1) / (a + b + 2); use the symmetry above it.
  return x < (a + 1) / (a + b + 2) ? (front * betaContinuedFraction(x, a, b)) / a : 1 - (front * betaContinuedFraction(1 - x, b, a)) / b;
}

/** P(T <= t) for Student's t with `df` degrees of freedom. */
export function studentTCdf(t: number, df: number): number {
  if (!(df > 0)) throw new InternalError(`df must be > 0, got ${df}`);
  if (Number.isNaN(t)) return Number.NaN;
  if (!Number.isFinite(t)) return t > 0 ? 1 : 0;
  const tail = 0.5 * regularizedIncompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t > 0 ? 1 - tail : tail;
}

/** Quantiles already computed: the judge asks for the same few (p, df) pairs thousands of times. */
const quantileCache = new Map<string, number>();

/** The t with P(T <= t) = p, by bisection on the CDF (monotone, so always converges). */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new InternalError(`p must be in (0, 1), got ${p}`);
  if (p === 0.5) return 0;
  const key = `${p}|${df}`;
  const cached = quantileCache.get(key);
  if (cached !== undefined) return cached;
  const value = bisectQuantile(p, df);
  if (quantileCache.size < 10_000) quantileCache.set(key, value);
  return value;
}

function bisectQuantile(p: number, df: number): number {
  let low = -1;
  let high = 1;
  while (studentTCdf(low, df) > p) low *= 2;
  while (studentTCdf(high, df) < p) high *= 2;
  for (let i = 0; i < 200 && high - low > 1e-12 * Math.max(1, Math.abs(high)); i++) {
    const mid = (low + high) / 2;
    if (studentTCdf(mid, df) < p) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

export interface TInterval {
  readonly n: number;
  readonly estimate: number;
  /** Sample standard deviation of the values (the between-trial noise). */
  readonly sd: number;
  readonly standardError: number;
  readonly low: number;
  readonly high: number;
  /** Two-sided p-value of "the mean is 0". 1 when all values are exactly 0; NaN with fewer than 2 values. */
  readonly pValue: number;
}

/** One-sample t interval and test of mean = 0, e.g. over per-trial effects. */
export function tInterval(values: readonly number[], confidence = 0.95): TInterval {
  const n = values.length;
  if (n === 0) return { n, estimate: Number.NaN, sd: Number.NaN, standardError: Number.NaN, low: Number.NaN, high: Number.NaN, pValue: Number.NaN };
  const estimate = mean([...values]);
  if (n < 2) return { n, estimate, sd: Number.NaN, standardError: Number.NaN, low: Number.NaN, high: Number.NaN, pValue: Number.NaN };
  const sd = sampleStandardDeviation([...values]);
  const standardError = sd / Math.sqrt(n);
  const critical = studentTQuantile(1 - (1 - confidence) / 2, n - 1);
  let pValue: number;
  if (standardError === 0) pValue = estimate === 0 ? 1 : 0;
  else pValue = 2 * (1 - studentTCdf(Math.abs(estimate / standardError), n - 1));
  return {
    n,
    estimate,
    sd,
    standardError,
    low: estimate - critical * standardError,
    high: estimate + critical * standardError,
    pValue: Math.min(1, Math.max(0, pValue)),
  };
}

/** P(F <= x) for the F distribution with (d1, d2) degrees of freedom. */
export function fCdf(x: number, d1: number, d2: number): number {
  if (x <= 0) return 0;
  return regularizedIncompleteBeta((d1 * x) / (d1 * x + d2), d1 / 2, d2 / 2);
}

/** False when the experiment's variance is significantly above the prior's (one-sided F test at `alpha`). */
export function varianceConsistent(sd: number, n: number, priorSd: number, priorDf: number, alpha = 0.01): boolean {
  if (n < 2 || !(priorSd > 0)) return n >= 2 && sd === 0;
  return 1 - fCdf((sd * sd) / (priorSd * priorSd), n - 1, priorDf) >= alpha;
}

/**
 * Benjamini–Hochberg adjusted p-values (step-up, made monotone), in the input
 * order. NaN entries (metrics without data) are left NaN and not counted. A `familySize` larger than the p-values
 * given counts hypotheses that were left out of the family but still spend their share (Tarone's K: tested-family.ts).
 */
export function benjaminiHochberg(pValues: readonly number[], familySize?: number): number[] {
  const present = pValues.map((p, index) => ({ p, index })).filter(({ p }) => !Number.isNaN(p));
  const m = Math.max(present.length, familySize ?? 0);
  const adjusted = pValues.map(() => Number.NaN);
  present.sort((a, b) => a.p - b.p);
  let running = 1;
  for (let rank = present.length; rank >= 1; rank--) {
    const { p, index } = present[rank - 1]!;
    running = Math.min(running, (p * m) / rank);
    adjusted[index] = running;
  }
  return adjusted;
}

/** The q-quantile of unsorted values (linear interpolation, as simple-statistics does). */
export function quantileOf(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  return quantileSorted(
    [...values].sort((a, b) => a - b),
    q,
  );
}

export interface BootstrapOptions {
  readonly seed: number;
  /** @default 500 */
  readonly resamples?: number;
  /** @default 0.95 */
  readonly confidence?: number;
}

/**
 * Percentile bootstrap interval of `statistic` over `values`, resampled with a
 * seeded generator: the same seed gives the same interval. For diagnostics
 * inside one trial (thousands of records), never across a handful of trials.
 */
export function bootstrapInterval<T>(
  values: readonly T[],
  statistic: (sample: readonly T[]) => number,
  options: BootstrapOptions,
): { low: number; high: number } {
  const n = values.length;
  if (n === 0) return { low: Number.NaN, high: Number.NaN };
  const random = seededRandom(options.seed);
  const resamples = options.resamples ?? 500;
  const estimates: number[] = [];
  const sample: T[] = new Array<T>(n);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) sample[i] = values[Math.floor(random() * n)]!;
    const value = statistic(sample);
    if (Number.isFinite(value)) estimates.push(value);
  }
  if (estimates.length === 0) return { low: Number.NaN, high: Number.NaN };
  estimates.sort((a, b) => a - b);
  const tail = (1 - (options.confidence ?? 0.95)) / 2;
  return { low: quantileSorted(estimates, tail), high: quantileSorted(estimates, 1 - tail) };
}

/**
 * t interval of a mean (per-record differences inside one trial: thousands of values, where it is the
 * normal interval). Not simple-statistics' probit: its 97.5% point is 1.95716, not 1.95996.
 */
export function meanInterval(values: readonly number[], confidence = 0.95): { estimate: number; low: number; high: number } {
  if (values.length < 2) return { estimate: values.length === 1 ? values[0]! : Number.NaN, low: Number.NaN, high: Number.NaN };
  const estimate = mean([...values]);
  const half = (studentTQuantile(1 - (1 - confidence) / 2, values.length - 1) * sampleStandardDeviation([...values])) / Math.sqrt(values.length);
  return { estimate, low: estimate - half, high: estimate + half };
}

/** Rearranges a[lo..hi] so that a[k] holds the k-th smallest value, smaller ones before it and larger after (Hoare's select). */
function selectInPlace(a: Float64Array, k: number, lo: number, hi: number): void {
  while (hi > lo) {
    const pivot = a[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const swap = a[i]!;
        a[i] = a[j]!;
        a[j] = swap;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return;
  }
}

/**
 * simple-statistics' `quantileSorted` (type 7: linear between order statistics (n − 1)·p) of unsorted
 * values, found by selection in place: no sort and no copy. The bootstrap of a quantile takes one per
 * resample, where sorting was most of a report's time; simple-statistics' own `quantile` copies its input
 * first and measured about 9× slower here. Reorders `values`. Equal results are tested against quantileSorted.
 */
export function quantileInPlace(values: Float64Array, p: number): number {
  const n = values.length;
  if (n === 0) return Number.NaN;
  if (p >= 1) {
    selectInPlace(values, n - 1, 0, n - 1);
    return values[n - 1]!;
  }
  if (p <= 0) {
    selectInPlace(values, 0, 0, n - 1);
    return values[0]!;
  }
  const idx = (n - 1) * p;
  const lower = Math.floor(idx);
  selectInPlace(values, lower, 0, n - 1);
  if (idx % 1 === 0) return values[lower]!;
  let upper = values[lower + 1]!;
  for (let i = lower + 2; i < n; i++) if (values[i]! < upper) upper = values[i]!;
  return values[lower]! + (idx - lower) * (upper - values[lower]!);
}
