/**
 * CPU time and resident memory of a local process, read from /proc (Linux):
 * what a deployed arm costs, measured outside the arm.
 */
import { readdir, readFile } from 'node:fs/promises';

/** /proc counts CPU time in clock ticks: sysconf(_SC_CLK_TCK), 100 on Linux. */
export const CLOCK_TICKS_PER_SECOND = 100;
const PAGE_BYTES = 4096;

export interface ProcessStats {
  /** User plus system CPU seconds since the process started. */
  readonly cpuSeconds: number;
  readonly rssBytes: number;
}

/**
 * CPU time of every thread of `pid` in seconds, from /proc/<pid>/task/<tid>/schedstat (its first field is the
 * time spent on a CPU, in nanoseconds). A trial's CPU per request is a difference over a few seconds:
 * /proc/<pid>/stat counts in 10 ms clock ticks, a percent of a 1-second window, while schedstat resolves
 * nanoseconds.
 */
async function schedstatCpuSeconds(pid: number): Promise<number | undefined> {
  try {
    const tids = await readdir(`/proc/${pid}/task`);
    const times = await Promise.all(
      tids.map((tid) =>
        readFile(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').then(
          (text) => Number(text.split(' ')[0]),
          () => 0,
        ),
      ),
    );
    const total = times.reduce((sum, ns) => sum + (Number.isFinite(ns) ? ns : 0), 0);
    return total > 0 ? total / 1e9 : undefined;
  } catch {
    return undefined;
  }
}

/** Stats of `pid`, or undefined when the process is gone or /proc is not there. */
export async function processStats(pid: number): Promise<ProcessStats | undefined> {
  try {
    const [stat, statm, precise] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile(`/proc/${pid}/statm`, 'utf8'), schedstatCpuSeconds(pid)]);
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    const residentPages = Number(statm.split(' ')[1]);
    return { cpuSeconds: precise ?? (utime + stime) / CLOCK_TICKS_PER_SECOND, rssBytes: residentPages * PAGE_BYTES };
  } catch {
    return undefined;
  }
}
