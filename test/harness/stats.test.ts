import { describe, expect, it } from 'vitest';
import jStat from 'jstat';
import {
  benjaminiHochberg,
  bootstrapInterval,
  kendallTau,
  meanInterval,
  quantileOf,
  ndcgAtK,
  ndcgAtKWithLabels,
  overlapAtK,
  fCdf,
  regularizedIncompleteBeta,
  studentTCdf,
  varianceConsistent,
  studentTQuantile,
  tInterval,
  quantileInPlace,
} from '../../harness/index.js';
import { quantileSorted } from 'simple-statistics';
import { seededRandom } from '../../core/index.js';

describe('Student t distribution', () => {
  it('matches the closed forms for 1 and 2 degrees of freedom', () => {
    for (const t of [-7, -1.5, -0.3, 0, 0.4, 1, 2.5, 12]) {
      // df = 1 is the Cauchy distribution; df = 2 has CDF 1/2 + t / (2 sqrt(2 + t^2)).
      expect(studentTCdf(t, 1)).toBeCloseTo(0.5 + Math.atan(t) / Math.PI, 10);
      expect(studentTCdf(t, 2)).toBeCloseTo(0.5 + t / (2 * Math.sqrt(2 + t * t)), 10);
    }
  });

  it('inverts to the table values used for 95% intervals', () => {
    expect(studentTQuantile(0.975, 1)).toBeCloseTo(12.7062, 3);
    expect(studentTQuantile(0.975, 4)).toBeCloseTo(2.7764, 4);
    expect(studentTQuantile(0.975, 30)).toBeCloseTo(2.0423, 4);
    expect(studentTQuantile(0.025, 4)).toBeCloseTo(-2.7764, 4);
    expect(studentTQuantile(0.8, 4)).toBeCloseTo(0.941, 4);
  });
});

describe('t interval across trials', () => {
  it('computes mean, interval and p-value by hand for five trials', () => {
    const r = tInterval([1, 2, 3, 4, 5]);
    // mean 3, sd sqrt(2.5) = 1.5811, se = 0.7071, t(0.975, 4) = 2.7764
    expect(r.estimate).toBe(3);
    expect(r.sd).toBeCloseTo(1.5811, 4);
    expect(r.standardError).toBeCloseTo(0.7071, 4);
    expect(r.low).toBeCloseTo(3 - 2.7764 * 0.7071, 3);
    expect(r.high).toBeCloseTo(3 + 2.7764 * 0.7071, 3);
    // t = 4.2426 with 4 df: two-sided p = 2 * (1 - CDF)
    expect(r.pValue).toBeCloseTo(2 * (1 - studentTCdf(3 / Math.sqrt(0.5), 4)), 12);
    expect(r.pValue).toBeCloseTo(0.01324, 4);
  });

  it('can reach significance with five trials, unlike an exact signed-rank test (p >= 0.0625)', () => {
    expect(tInterval([0.031, 0.029, 0.033, 0.028, 0.03]).pValue).toBeLessThan(0.001);
  });

  it('has no interval with fewer than two values', () => {
    expect(Number.isNaN(tInterval([0.1]).pValue)).toBe(true);
    expect(Number.isNaN(tInterval([]).estimate)).toBe(true);
  });
});

describe('Benjamini–Hochberg', () => {
  it('adjusts by hand-computed step-up values, in input order, leaving NaN alone', () => {
    // sorted: 0.005 (x4/1 = 0.02), 0.01 (x4/2 = 0.02), 0.03 (x4/3 = 0.04), 0.04 (x4/4 = 0.04)
    const adjusted = benjaminiHochberg([0.01, 0.04, Number.NaN, 0.03, 0.005]);
    expect(adjusted[0]).toBeCloseTo(0.02, 12);
    expect(adjusted[1]).toBeCloseTo(0.04, 12);
    expect(Number.isNaN(adjusted[2]!)).toBe(true);
    expect(adjusted[3]).toBeCloseTo(0.04, 12);
    expect(adjusted[4]).toBeCloseTo(0.02, 12);
  });

  it('keeps adjusted values monotone and at most 1', () => {
    const adjusted = benjaminiHochberg([0.9, 0.8, 0.95, 0.01]);
    expect(Math.max(...adjusted)).toBeLessThanOrEqual(1);
    expect(adjusted[3]).toBeCloseTo(0.04, 12);
    expect(adjusted[0]).toBeCloseTo(0.95, 12);
  });
});

describe('distribution functions against jStat as an oracle', () => {
  const dfs = [1, 2, 3, 4, 7, 12, 30, 120];
  it('Student t CDF and quantiles', () => {
    for (const df of dfs) {
      for (const t of [-12, -3.1, -1, -0.2, 0, 0.5, 1.96, 4.4, 25]) expect(studentTCdf(t, df)).toBeCloseTo(jStat.studentt.cdf(t, df), 7);
      for (const p of [0.0005, 0.005, 0.025, 0.2, 0.5, 0.8, 0.975, 0.9975]) expect(studentTQuantile(p, df)).toBeCloseTo(jStat.studentt.inv(p, df), 6);
    }
  });

  it('the regularized incomplete beta function and the F CDF', () => {
    for (const [a, b] of [
      [0.5, 0.5],
      [1, 3],
      [2.5, 7],
      [10, 0.5],
      [30, 40],
    ] as const) {
      for (const x of [0.001, 0.05, 0.3, 0.5, 0.77, 0.999]) expect(regularizedIncompleteBeta(x, a, b)).toBeCloseTo(jStat.ibeta(x, a, b), 7);
    }
    for (const [d1, d2] of [
      [1, 1],
      [3, 18],
      [4, 4],
      [12, 40],
    ] as const) {
      for (const x of [0.1, 0.9, 1, 2.5, 8]) expect(fCdf(x, d1, d2)).toBeCloseTo(jStat.centralF.cdf(x, d1, d2), 7);
    }
  });

  it('the F test that says an experiment is noisier than its calibration', () => {
    // Variance ratio 4 with (4, 18) df: P(F > 4) = 0.0171, significant at 5% but not at 1%.
    expect(1 - fCdf(4, 4, 18)).toBeCloseTo(1 - jStat.centralF.cdf(4, 4, 18), 9);
    expect(varianceConsistent(2, 5, 1, 18, 0.01)).toBe(true);
    expect(varianceConsistent(2, 5, 1, 18, 0.05)).toBe(false);
  });
});

describe('seeded bootstrap', () => {
  const values = Array.from({ length: 400 }, (_, i) => Math.sin(i) * 10 + i / 40);
  const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

  it('gives the same interval for the same seed and another for another seed', () => {
    const a = bootstrapInterval(values, mean, { seed: 42, resamples: 300 });
    const b = bootstrapInterval(values, mean, { seed: 42, resamples: 300 });
    const c = bootstrapInterval(values, mean, { seed: 43, resamples: 300 });
    expect(a).toEqual(b);
    expect(c).not.toEqual(a);
    expect(a.low).toBeLessThan(mean(values));
    expect(a.high).toBeGreaterThan(mean(values));
  });
});

describe('ranking metrics', () => {
  it('NDCG@k against a reference ranking, by hand', () => {
    // gains a=3, b=2, c=1; DCG(b,a,c) = 2 + 3/log2(3) + 1/2; ideal = 3 + 2/log2(3) + 1/2
    const expected = (2 + 3 / Math.log2(3) + 0.5) / (3 + 2 / Math.log2(3) + 0.5);
    expect(ndcgAtK(['b', 'a', 'c'], ['a', 'b', 'c'], 3)).toBeCloseTo(expected, 12);
    expect(ndcgAtK(['a', 'b', 'c'], ['a', 'b', 'c'], 3)).toBe(1);
    expect(ndcgAtK(['x', 'y'], ['a', 'b'], 2)).toBe(0);
  });

  it('NDCG@k against graded labels, by hand', () => {
    // gains 2^grade - 1: c=1, a=7; DCG = 1 + 7/log2(3); ideal (a, c) = 7 + 1/log2(3)
    const labels = new Map([
      ['a', 3],
      ['b', 0],
      ['c', 1],
    ]);
    expect(ndcgAtKWithLabels(['c', 'a'], labels, 2)).toBeCloseTo((1 + 7 / Math.log2(3)) / (7 + 1 / Math.log2(3)), 12);
  });

  it('Kendall tau over common items', () => {
    expect(kendallTau(['a', 'b', 'c', 'd'], ['a', 'b', 'd', 'c'])).toBeCloseTo(4 / 6, 12);
    expect(kendallTau(['a', 'b', 'c'], ['c', 'b', 'a'])).toBe(-1);
    expect(kendallTau(['a', 'b', 'x'], ['b', 'a', 'y'])).toBe(-1);
    expect(Number.isNaN(kendallTau(['a'], ['a']))).toBe(true);
  });

  it('overlap@k', () => {
    expect(overlapAtK(['a', 'b', 'c'], ['b', 'c', 'a'], 2)).toBe(0.5);
    expect(overlapAtK(['a', 'b'], ['b', 'a'], 2)).toBe(1);
    expect(overlapAtK([], [], 3)).toBe(1);
  });
});

describe('quantiles and the normal interval of a mean', () => {
  it('interpolates quantiles linearly between order statistics, whatever the input order', () => {
    const values = [7, 1, 3, 5];
    expect(quantileOf(values, 0)).toBe(1);
    expect(quantileOf(values, 1)).toBe(7);
    expect(quantileOf(values, 0.5)).toBeCloseTo(4, 12);
    // position (n - 1) * q = 0.75 between 1 and 3
    expect(quantileOf(values, 0.25)).toBeCloseTo(2.5, 12);
    expect(quantileOf([], 0.5)).toBeNaN();
    expect(values).toEqual([7, 1, 3, 5]);
  });

  it('gives mean ± t·sd/√n, by hand, and no interval for fewer than two values', () => {
    // mean 3, sample sd √2.5, n 5: half-width t(0.975, 4) · 1.581139 / 2.236068 = 2.776445 · 0.707107 = 1.963243
    const { estimate, low, high } = meanInterval([1, 2, 3, 4, 5]);
    expect(estimate).toBe(3);
    expect(high - estimate).toBeCloseTo(1.963243, 5);
    expect(estimate - low).toBeCloseTo(1.963243, 5);
    // Thousands of values: the normal interval, 1.959964 · sd/√n (sd of 0..9 repeated is 2.872425).
    const many = Array.from({ length: 10_000 }, (_, i) => i % 10);
    const wide = meanInterval(many);
    expect(wide.high - wide.estimate).toBeCloseTo((1.959964 * 2.872425) / 100, 4);
    expect(meanInterval([4])).toEqual({ estimate: 4, low: Number.NaN, high: Number.NaN });
    expect(meanInterval([]).estimate).toBeNaN();
  });
});

describe('quantileInPlace', () => {
  it('equals simple-statistics quantileSorted on the sorted values, ties and every kind of index included', () => {
    const random = seededRandom(7);
    for (let round = 0; round < 3_000; round++) {
      const n = 1 + Math.floor(random() * 300);
      // Few distinct values: many ties, which is where a partition can go wrong.
      const values = Float64Array.from({ length: n }, () => Math.round(random() * 40) / (random() < 0.5 ? 1 : 7));
      const sorted = Float64Array.from(values).sort();
      for (const p of [0, 0.01, 0.025, 0.1, 0.25, 0.5, 0.9, 0.975, 0.99, 1])
        expect(quantileInPlace(Float64Array.from(values), p), `n=${n} p=${p}`).toBe(quantileSorted(sorted as unknown as number[], p));
    }
    expect(quantileInPlace(new Float64Array(0), 0.5)).toBeNaN();
  });
});
