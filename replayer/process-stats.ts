/**
 * CPU time and resident memory of a local process, read from /proc (Linux):
 * what a deployed arm costs, measured outside the arm.
 */
import { readFile } from 'node:fs/promises';

const CLOCK_TICKS_PER_SECOND = 100; // sysconf(_SC_CLK_TCK) on Linux
const PAGE_BYTES = 4096;

export interface ProcessStats {
  /** User plus system CPU seconds since the process started. */
  readonly cpuSeconds: number;
  readonly rssBytes: number;
}

/** Stats of `pid`, or undefined when the process is gone or /proc is not there. */
export async function processStats(pid: number): Promise<ProcessStats | undefined> {
  try {
    const [stat, statm] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile(`/proc/${pid}/statm`, 'utf8')]);
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    const residentPages = Number(statm.split(' ')[1]);
    return { cpuSeconds: (utime + stime) / CLOCK_TICKS_PER_SECOND, rssBytes: residentPages * PAGE_BYTES };
  } catch {
    return undefined;
  }
}
