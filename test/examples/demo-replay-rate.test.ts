import { describe, expect, it } from 'vitest';
import {
  BUSY_ARMS_CPU_SHARE,
  BUSY_MACHINE_RATE,
  MIN_DEMO_RATE,
  QUIET_ARMS_CPU_SHARE,
  QUIET_MACHINE_RATE,
  WINDOW_REQUESTS,
  allowedCpusOf,
  idleCpusBetween,
  isQuietMachine,
  measureSecondsAt,
  rateAfterLoadFailure,
  rateForRequestCost,
} from '../../examples/demo/replay-rate.js';

/** A /proc/stat with the given (user, idle) jiffies per CPU; the other columns fixed. */
function procStat(perCpu: readonly (readonly [number, number])[]): string {
  const line = (name: string, user: number, idle: number): string => `${name} ${user} 0 10 ${idle} 5 0 1 0 0 0`;
  const total = perCpu.reduce(([u, i], [cu, ci]) => [u + cu, i + ci] as [number, number], [0, 0]);
  return [line('cpu', total[0], total[1]), ...perCpu.map(([user, idle], cpu) => line(`cpu${cpu}`, user, idle)), 'intr 1 2 3', 'ctxt 99'].join('\n');
}

describe('the demo’s replay rate', () => {
  it('counts the idle CPUs among those allowed between two reads of /proc/stat', () => {
    const before = procStat([
      [1_000, 5_000],
      [2_000, 4_000],
    ]);
    // CPU 0 idle for the whole window, CPU 1 busy for all of it (a spinning process).
    const after = procStat([
      [1_000, 5_100],
      [2_100, 4_000],
    ]);
    expect(idleCpusBetween(before, after, [0, 1])).toBeCloseTo(1, 6);
    expect(idleCpusBetween(before, after, [0])).toBeCloseTo(1, 6);
    expect(idleCpusBetween(before, after, [1])).toBeCloseTo(0, 6);
    // Half of each CPU's time idle.
    expect(
      idleCpusBetween(
        before,
        procStat([
          [1_050, 5_050],
          [2_050, 4_050],
        ]),
        [0, 1],
      ),
    ).toBeCloseTo(1, 6);
  });

  it('is undefined when a read is not a /proc/stat, lacks the CPU, or did not move', () => {
    const before = procStat([[1_000, 5_000]]);
    expect(idleCpusBetween('', before, [0])).toBeUndefined();
    expect(idleCpusBetween(before, procStat([[1_000, 5_100]]), [3])).toBeUndefined();
    expect(idleCpusBetween(before, before, [0])).toBeUndefined();
  });

  it('replays at the quiet rate on a quiet machine and at the lower one once other work keeps half a CPU or more busy', () => {
    expect(BUSY_MACHINE_RATE).toBeLessThan(QUIET_MACHINE_RATE);
    expect(isQuietMachine(1.95, 2)).toBe(true);
    expect(isQuietMachine(1.5, 2)).toBe(true);
    expect(isQuietMachine(1.4, 2)).toBe(false);
    // One core kept busy by a spinning process.
    expect(isQuietMachine(0.97, 2)).toBe(false);
    // Off Linux nothing is known: the quiet machine's rate.
    expect(isQuietMachine(undefined, 2)).toBe(true);
    expect([rateForRequestCost(true, undefined), rateForRequestCost(false, undefined)]).toEqual([QUIET_MACHINE_RATE, BUSY_MACHINE_RATE]);
  });

  it('reads the allowed CPUs from /proc/self/status, ranges and lists included', () => {
    expect(allowedCpusOf('Cpus_allowed_list:\t0-1\n')).toEqual([0, 1]);
    expect(allowedCpusOf('Cpus_allowed_list:\t2-3,6\n')).toEqual([2, 3, 6]);
    expect(allowedCpusOf('')).toEqual([]);
  });

  it('keeps both rates where a request costs what they were chosen at, and lowers them where both arms would need more than their share of one CPU', () => {
    // About 15 ms: the hosts the rates were measured on.
    for (const ms of [9, 15, 16]) {
      expect(rateForRequestCost(true, ms / 1000)).toBe(QUIET_MACHINE_RATE);
      expect(rateForRequestCost(false, ms / 1000)).toBe(BUSY_MACHINE_RATE);
    }
    // The sixteenth host: about 40 ms, where 20 pairs/s asked the two arms for 1.6 CPUs.
    expect(rateForRequestCost(true, 0.04)).toBe(8);
    expect(rateForRequestCost(false, 0.04)).toBe(6);
    for (const [quiet, share] of [
      [true, QUIET_ARMS_CPU_SHARE],
      [false, BUSY_ARMS_CPU_SHARE],
    ] as const) {
      for (const ms of [17, 20, 30, 45, 60, 90]) {
        const rate = rateForRequestCost(quiet, ms / 1000);
        // Within the share, unless held at the floor (90 ms busy).
        if (2 * rate * (ms / 1000) > share) expect([rate, ms]).toEqual([MIN_DEMO_RATE, 90]);
        // The machine's rate, or the highest within the share: one more pair per second would be over it.
        if (rate < (quiet ? QUIET_MACHINE_RATE : BUSY_MACHINE_RATE)) expect(2 * (rate + 1) * (ms / 1000)).toBeGreaterThan(share);
      }
    }
    // Never below the floor, however slow; never raised; an unknown or nonsensical cost keeps the rate.
    expect(rateForRequestCost(true, 1)).toBe(MIN_DEMO_RATE);
    expect(rateForRequestCost(true, 0.001)).toBe(QUIET_MACHINE_RATE);
    for (const cost of [undefined, 0, -0.01, Number.NaN]) expect(rateForRequestCost(true, cost)).toBe(QUIET_MACHINE_RATE);
  });

  it('lowers a rate whose trials failed their load to its share of what they achieved, below the failed rate, never under the floor', () => {
    // The sixteenth host in CI: the probe read 23.6 ms, 14 pairs/s quiet, trials achieved 8.0–10.7 (median 9.1).
    expect(rateAfterLoadFailure(true, 14, [8.0, 10.7, 9.1, 8.8, 10.1], QUIET_MACHINE_RATE)).toBe(Math.floor(9.1 * QUIET_ARMS_CPU_SHARE));
    expect(rateAfterLoadFailure(false, 14, [8.0, 10.7, 9.1, 8.8, 10.1], QUIET_MACHINE_RATE)).toBe(Math.floor(9.1 * BUSY_ARMS_CPU_SHARE));
    // Even count: the mean of the middle two (9.0 → 6).
    expect(rateAfterLoadFailure(true, 14, [8.0, 8.5, 9.5, 10.5], QUIET_MACHINE_RATE)).toBe(6);
    // Trials that nearly held it (15.7 of 20, just under the 0.8 they must reach): two thirds of what they achieved.
    expect(rateAfterLoadFailure(true, 20, [15.5, 15.9], QUIET_MACHINE_RATE)).toBe(10);
    // Never the failed rate again, whatever the attempts say they achieved; never under the floor.
    expect(rateAfterLoadFailure(true, 10, [30, 31], QUIET_MACHINE_RATE)).toBe(9);
    expect(rateAfterLoadFailure(true, 5, [4.9, 4.8], QUIET_MACHINE_RATE)).toBe(MIN_DEMO_RATE);
    // 5.3–7.7 of 10 inside the suite: the floor.
    expect(rateAfterLoadFailure(true, 10, [5.3, 6.1, 7.7, 6.4, 5.9], QUIET_MACHINE_RATE)).toBe(MIN_DEMO_RATE);
    // Nothing to lower to, or nothing read.
    expect(rateAfterLoadFailure(true, MIN_DEMO_RATE, [2.1], QUIET_MACHINE_RATE)).toBeUndefined();
    expect(rateAfterLoadFailure(true, 14, [], QUIET_MACHINE_RATE)).toBeUndefined();
    expect(rateAfterLoadFailure(true, 14, [Number.NaN, -1], QUIET_MACHINE_RATE)).toBeUndefined();
  });

  it('never lowers a rate asked for with --rate to more than the demo would choose here by itself', () => {
    // CI, 2026-12-06: 100 asked for, the trials achieved a median of 39, and two thirds of it (26) failed as well.
    const achieved = [31, 42, 40, 37.67, 39];
    expect(rateAfterLoadFailure(true, 100, achieved, 100)).toBe(26);
    expect(rateAfterLoadFailure(true, 100, achieved, rateForRequestCost(true, 0.01158))).toBe(QUIET_MACHINE_RATE);
    expect(rateAfterLoadFailure(false, 100, achieved, rateForRequestCost(false, 0.01158))).toBe(BUSY_MACHINE_RATE);
    // Below the machine's rate, the share of what was achieved stands.
    expect(rateAfterLoadFailure(true, 100, [12, 13, 14], QUIET_MACHINE_RATE)).toBe(8);
  });

  it("lengthens a trial's window at low rates so it holds about as many requests as the busy rate's 3 s, within the recording", () => {
    // The rates the demo chooses by itself keep their 3 s.
    expect([measureSecondsAt(QUIET_MACHINE_RATE, 3), measureSecondsAt(BUSY_MACHINE_RATE, 3)]).toEqual([3, 3]);
    // CI's lowered 8 pairs/s: 3 s held 24 requests per arm and a clean change stayed undecided after 48 trials.
    expect(measureSecondsAt(8, 3)).toBe(5);
    for (let rate = MIN_DEMO_RATE; rate <= QUIET_MACHINE_RATE; rate++) {
      const seconds = measureSecondsAt(rate, 3);
      // At least about the busy rate's requests per window (a rate just under the busy one keeps 3 s: 39 of 42)…
      expect(rate * seconds, `${rate} pairs/s`).toBeGreaterThanOrEqual(Math.min(rate * 3, WINDOW_REQUESTS) - rate);
      // …and never more records per trial (1 s warm-up) than the smallest recording holds, the busy rate's four seconds.
      expect(rate * (1 + seconds), `${rate} pairs/s`).toBeLessThanOrEqual(Math.max(BUSY_MACHINE_RATE * 4, rate * 4));
    }
    for (const rate of [0, -1, Number.NaN]) expect(measureSecondsAt(rate, 3)).toBe(3);
  });
});
