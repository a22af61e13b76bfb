import { describe, expect, it } from 'vitest';
import { ResetBudget } from '../../net/index.js';

describe('the early-reset budget of a client connection', () => {
  it('allows its burst at once, then what it refills at its rate, and never more than its burst', () => {
    const budget = new ResetBudget({ burst: 3, perSecond: 2 }, 0);
    expect([budget.spend(0), budget.spend(0), budget.spend(0), budget.spend(0)]).toEqual([true, true, true, false]);
    // Half a second refills one.
    expect([budget.spend(500), budget.spend(500)]).toEqual([true, false]);
    // A long quiet spell refills the burst, no more.
    expect([budget.spend(60_000), budget.spend(60_000), budget.spend(60_000), budget.spend(60_000)]).toEqual([true, true, true, false]);
    // A clock that steps back refills nothing.
    expect(budget.spend(1_000)).toBe(false);
  });
});
