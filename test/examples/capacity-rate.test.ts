import { describe, expect, it } from 'vitest';
import { capacityRateFor, MIN_RATE, RANKING_LOAD_FACTOR } from '../../examples/stack/capacity-rate.js';

describe('the capacity story’s rate for this host', () => {
  it('keeps the default where ranking is light, scales it down to give ranking its load-factor, and never goes below the floor', () => {
    expect(capacityRateFor(0.3, 20)).toBe(20);
    expect(capacityRateFor(RANKING_LOAD_FACTOR, 20)).toBe(20);
    // Twice the cost per request: half the rate, whole requests per second.
    expect(capacityRateFor(RANKING_LOAD_FACTOR * 2, 20)).toBe(10);
    expect(capacityRateFor(1.1, 20)).toBe(Math.floor((20 * RANKING_LOAD_FACTOR) / 1.1));
    expect(capacityRateFor(50, 20)).toBe(MIN_RATE);
    // A probe that measured nothing leaves the rate alone rather than dividing by zero.
    expect(capacityRateFor(0, 20)).toBe(20);
    expect(capacityRateFor(Number.NaN, 20)).toBe(20);
  });
});
