/**
 * How much of the arms' CPUs other work took during a trial's measurement window, when the arms are pinned
 * (`trials.slotCpus`): the CPUs' busy time from /proc/stat (everything but idle and I/O wait, the hypervisor's
 * steal included) less the arms' own CPU time, as a share of those CPUs' time.
 *
 * Why it is measured: pairing cancels what other work does to both arms alike, but not all of it (on one busy
 * machine, trials whose tenant shared the arms' CPU for most of the window had a paired sd of 3.66%, those where
 * it ran elsewhere 1.93%: docs/harness.md). This says whether the arms had their CPUs to themselves; it does not
 * say what a tenant does to the requests that do run (caches, the core's other thread, the host under a VM).
 */
import { readFile } from 'node:fs/promises';
import { CLOCK_TICKS_PER_SECOND, processStats } from './process-stats.js';

/** The CPUs of a list as taskset takes it ("1", "0-3,6"); empty when the list is not one. */
export function cpusOfList(list: string): number[] {
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(list)) return [];
  const cpus = new Set<number>();
  for (const part of list.split(',')) {
    const [from, to = from] = part.split('-').map(Number) as [number, number?];
    // A range is bounded by what a machine has (taskset refuses more than its mask): no loop over a hostile range.
    if (to! < from || to! - from > 4_096) return [];
    for (let cpu = from; cpu <= to!; cpu++) cpus.add(cpu);
  }
  return [...cpus].sort((a, b) => a - b);
}

/** One CPU's times in seconds since boot, from its `cpuN` line of /proc/stat; undefined when the line is not there or not numbers. */
export function cpuTimesOf(procStat: string, cpu: number): { busy: number; total: number } | undefined {
  const fields = new RegExp(`^cpu${cpu}((?: +\\d+){4,})\\s*$`, 'm').exec(procStat)?.[1]?.trim().split(/ +/).map(Number);
  if (!fields) return undefined;
  // user nice system idle iowait irq softirq steal; guest time is already counted in user and nice.
  const counted = fields.slice(0, 8);
  const total = counted.reduce((a, b) => a + b, 0);
  const idle = counted[3]! + (counted[4] ?? 0);
  return { busy: (total - idle) / CLOCK_TICKS_PER_SECOND, total: total / CLOCK_TICKS_PER_SECOND };
}

/** The arms' CPUs' summed times and the arms' own CPU seconds at one instant. */
export interface ArmCpuReading {
  readonly busy: number;
  readonly total: number;
  readonly arms: number;
}

/** The reading from a /proc/stat text and the arms' CPU seconds; undefined when a CPU is missing from the text. */
export function armCpuReadingOf(procStat: string, cpus: readonly number[], armSeconds: number): ArmCpuReading | undefined {
  let busy = 0;
  let total = 0;
  for (const cpu of cpus) {
    const times = cpuTimesOf(procStat, cpu);
    if (!times) return undefined;
    busy += times.busy;
    total += times.total;
  }
  return { busy, total, arms: armSeconds };
}

/**
 * Share of the CPUs' time between two readings that went to work other than the arms': in [0, 1], or undefined
 * when the readings do not span time (or a counter went back). The arms' time is nanosecond-exact and /proc/stat
 * counts whole ticks, so a tick's worth of difference is rounding: the share is clamped to [0, 1].
 */
export function otherWorkShare(before: ArmCpuReading, after: ArmCpuReading): number | undefined {
  const total = after.total - before.total;
  const busy = after.busy - before.busy;
  const arms = after.arms - before.arms;
  if (!(total > 0) || busy < 0 || arms < 0) return undefined;
  return Math.min(1, Math.max(0, (busy - arms) / total));
}

/** Read /proc/stat and the arms' processes now; undefined off Linux, or when a process is gone. */
export async function readArmCpus(cpus: readonly number[], pids: readonly number[]): Promise<ArmCpuReading | undefined> {
  const [procStat, stats] = await Promise.all([readFile('/proc/stat', 'utf8').catch(() => undefined), Promise.all(pids.map((pid) => processStats(pid)))]);
  if (procStat === undefined || stats.some((s) => s === undefined)) return undefined;
  return armCpuReadingOf(
    procStat,
    cpus,
    stats.reduce((sum, s) => sum + s!.cpuSeconds, 0),
  );
}
