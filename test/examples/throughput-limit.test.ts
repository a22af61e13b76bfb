import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../core/index.js';
import { ThroughputLimit } from '../../examples/stack/throughput-limit.js';

describe('throughput limit (the feature store of the capacity story)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'performance', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("serves work first come first served: waits grow by each arrival's service time, idle time is not banked", async () => {
    const limit = new ThroughputLimit(1_000, systemClock); // 1,000 units per second
    const reserved: number[] = [];
    const done: string[] = [];
    const a = limit.occupy(100, (ms) => reserved.push(ms)).then(() => done.push('a'));
    const b = limit.occupy(200, (ms) => reserved.push(ms)).then(() => done.push('b'));
    expect(reserved).toEqual([100, 200]);
    await vi.advanceTimersByTimeAsync(99);
    expect(done).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toEqual(['a']);
    await vi.advanceTimersByTimeAsync(200);
    await Promise.all([a, b]);
    expect(done).toEqual(['a', 'b']);
    // After a second idle, new work starts at once and takes its full service time: capacity unused is lost, not saved up.
    await vi.advanceTimersByTimeAsync(1_000);
    const c = limit.occupy(50).then(() => done.push('c'));
    await vi.advanceTimersByTimeAsync(49);
    expect(done.at(-1)).toBe('b');
    await vi.advanceTimersByTimeAsync(1);
    await c;
    expect(done.at(-1)).toBe('c');
  });

  it('rejects a throughput that is not a positive number', () => {
    expect(() => new ThroughputLimit(0, systemClock)).toThrow(/positive number of units per second, got 0/);
  });
});
