import { describe, expect, it } from 'vitest';
import { armCpuReadingOf, cpuTimesOf, cpusOfList, otherWorkShare, readArmCpus } from '../../replayer/arm-cpu-contention.js';

/** A /proc/stat with the given (user, idle, steal) ticks per CPU; system 10 and iowait 5, guest columns 7 and 3 (already in user). */
function procStat(perCpu: readonly (readonly [number, number, number?])[]): string {
  const line = (name: string, user: number, idle: number, steal = 0): string => `${name} ${user} 0 10 ${idle} 5 0 1 ${steal} 7 3`;
  return ['cpu  1 2 3 4 5 6 7 8 9 10', ...perCpu.map(([user, idle, steal], cpu) => line(`cpu${cpu}`, user, idle, steal)), 'intr 1 2 3', 'ctxt 99'].join('\n');
}

describe("other work on the arms' CPUs", () => {
  it('reads a CPU list as taskset does, and nothing from one that is not', () => {
    expect(cpusOfList('1')).toEqual([1]);
    expect(cpusOfList('0-3,6')).toEqual([0, 1, 2, 3, 6]);
    // Both slots on the same CPU: counted once.
    expect(cpusOfList('1,1')).toEqual([1]);
    for (const hostile of ['', '1;rm -rf /', '3-1', '0-99999999', 'a', '1,', '-1']) expect(cpusOfList(hostile)).toEqual([]);
  });

  it("reads one CPU's busy and total time from /proc/stat: idle and I/O wait are idle, steal is busy, guest is not counted twice", () => {
    // user 100 + system 10 + softirq 1 + steal 4 busy; idle 300 + iowait 5; ticks of 10 ms.
    expect(
      cpuTimesOf(
        procStat([
          [50, 50],
          [100, 300, 4],
        ]),
        1,
      ),
    ).toEqual({ busy: 1.15, total: 4.2 });
    expect(cpuTimesOf(procStat([[50, 50]]), 3)).toBeUndefined();
    expect(cpuTimesOf('cpu0 12 x 1 2 3', 0)).toBeUndefined();
    expect(cpuTimesOf('', 0)).toBeUndefined();
    // cpu1 must not be read from cpu10's line.
    expect(cpuTimesOf('cpu10 1 2 3 4 5 6 7 8', 1)).toBeUndefined();
  });

  it("takes the arms' own time out of their CPUs' busy time, as a share of those CPUs' time", () => {
    const before = armCpuReadingOf(
      procStat([
        [1_000, 5_000],
        [2_000, 4_000],
      ]),
      [1],
      10,
    );
    // Over 1 s of CPU 1: 80 ticks busy, of which the arms used 0.3 s; the other 0.5 s was other work.
    const after = armCpuReadingOf(
      procStat([
        [1_000, 5_100],
        [2_080, 4_020],
      ]),
      [1],
      10.3,
    );
    expect(otherWorkShare(before!, after!)).toBeCloseTo(0.5, 9);
    // Two CPUs: their times add up.
    const both = [
      armCpuReadingOf(
        procStat([
          [1_000, 5_000],
          [2_000, 4_000],
        ]),
        [0, 1],
        0,
      )!,
      armCpuReadingOf(
        procStat([
          [1_050, 5_050],
          [2_080, 4_020],
        ]),
        [0, 1],
        0.3,
      )!,
    ];
    expect(otherWorkShare(both[0]!, both[1]!)).toBeCloseTo((1.3 - 0.3) / 2, 9);
  });

  it('clamps the rounding of whole ticks against nanoseconds to [0, 1], and gives nothing for readings that do not span time', () => {
    const at = (user: number, idle: number, arms: number) => armCpuReadingOf(procStat([[user, idle]]), [0], arms)!;
    // The arms measured 0.51 s where the ticks counted 0.5 s busy: no other work, not −1%.
    expect(otherWorkShare(at(0, 0, 0), at(50, 50, 0.51))).toBe(0);
    expect(otherWorkShare(at(0, 0, 0), at(0, 0, 0))).toBeUndefined();
    expect(otherWorkShare(at(50, 50, 0), at(0, 0, 0))).toBeUndefined();
    expect(otherWorkShare(at(0, 0, 1), at(50, 50, 0))).toBeUndefined();
    expect(armCpuReadingOf(procStat([[1, 1]]), [0, 2], 0)).toBeUndefined();
  });

  it('reads this machine: a live process gives a reading, a gone one none', async () => {
    const reading = await readArmCpus([0], [process.pid]);
    expect(reading?.arms).toBeGreaterThan(0);
    expect(reading!.total).toBeGreaterThanOrEqual(reading!.busy);
    expect(await readArmCpus([0], [2 ** 22 + 1])).toBeUndefined();
  });
});
