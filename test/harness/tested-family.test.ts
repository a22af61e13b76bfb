import { describe, expect, it } from 'vitest';
import { testedFamily } from '../../harness/judge/tested-family.js';

describe('the family Benjamini–Hochberg counts (Tarone)', () => {
  it('leaves out a metric whose trials moved too rarely to reach its share of α, and adjusts the rest as one of K', () => {
    // The verdict bench's +3% step at its 15th look: latency's two metrics could reach any level, the error share
    // moved in five trials (its flips' smallest p-value 2/2⁵). Counted, the lone latency regression needed α/3.
    const shift = { pValue: 0.02, smallestP: 2 / 2 ** 15 };
    const p99 = { pValue: 0.4, smallestP: 2 / 2 ** 15 };
    const errors = { pValue: 0.0625, smallestP: 2 / 2 ** 5 };
    const family = testedFamily([shift, p99, errors], 0.05);
    expect(family.size).toBe(2);
    expect(family.tested).toEqual([shift, p99]);
    expect(family.adjusted[0]).toBeCloseTo(0.04, 12);
    expect(family.adjusted[1]).toBeCloseTo(0.4, 12);
    // Left out, it is adjusted as if tested among K: above α, so never significant.
    expect(family.adjusted[2]).toBeCloseTo(0.125, 12);
  });

  it('counts every metric that could reach its share: plain Benjamini–Hochberg', () => {
    const family = testedFamily(
      [
        { pValue: 0.01, smallestP: 0.001 },
        { pValue: 0.03, smallestP: 0.001 },
        { pValue: 0.5, smallestP: 0.01 },
      ],
      0.05,
    );
    expect(family.size).toBe(3);
    expect(family.adjusted.map((p) => Number(p.toFixed(6)))).toEqual([0.03, 0.045, 0.5]);
  });

  it('keeps K at the number that could reach α/K even when fewer of them are left', () => {
    // Two could reach α, only one α/2: K is 2 (Tarone's smallest K with at most K reaching α/K), so the one left in
    // is adjusted as one of two — leaving the other out does not give its share to the first.
    const strong = { pValue: 0.03, smallestP: 0.001 };
    const rare = { pValue: 0.031, smallestP: 0.031 };
    const family = testedFamily([strong, rare], 0.05);
    expect(family).toMatchObject({ size: 2, tested: [strong] });
    expect(family.adjusted[0]).toBeCloseTo(0.06, 12);
    expect(family.adjusted[1]).toBeCloseTo(0.062, 12);
  });

  it('counts nothing that cannot move, and a family of one at its own p-value', () => {
    const unmoved = { pValue: 1, smallestP: 1 };
    const alone = { pValue: 0.03, smallestP: 0.001 };
    const family = testedFamily([alone, unmoved], 0.05);
    expect(family).toMatchObject({ size: 1, tested: [alone] });
    expect(family.adjusted).toEqual([0.03, 1]);
    expect(testedFamily([], 0.05)).toMatchObject({ size: 0, tested: [], adjusted: [] });
  });
});
