/**
 * Processes of deployed arms, recorded with the trial that started them, so a
 * run that was killed (SIGKILL leaves no chance to stop them) does not leave
 * them behind for good: the next run of the experiment, or `tandem cancel`,
 * stops what is still there. A pid is reused once its process is gone, so a
 * recorded process is only stopped if it started when it was recorded (its
 * start time in /proc), and then as a whole process group (arms are started
 * detached, as group leaders).
 */
import { readFileSync } from 'node:fs';
import type { TrialDetails, TrialProcess } from '../core/index.js';

/** A process an arm ran; its start time in clock ticks since boot (/proc/PID/stat field 22), undefined where /proc is missing. */
export type RecordedProcess = TrialProcess;

function startTicks(pid: number): number | undefined {
  try {
    // The command name (field 2) may contain spaces and parentheses: fields are counted after its closing one.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  } catch {
    return undefined;
  }
}

export function recordProcess(arm: string, pid: number): RecordedProcess {
  const ticks = startTicks(pid);
  return { arm, pid, ...(ticks !== undefined ? { startTicks: ticks } : {}) };
}

/** Stop the recorded processes still running as they were recorded; returns how many groups were stopped. */
export function stopLeftovers(processes: readonly RecordedProcess[]): number {
  let stopped = 0;
  for (const p of processes) {
    // Without a recorded start time the pid may be anyone's now: left alone.
    if (p.startTicks === undefined || !Number.isInteger(p.pid) || p.pid <= 1) continue;
    if (startTicks(p.pid) !== p.startTicks) continue;
    try {
      process.kill(-p.pid, 'SIGKILL');
      stopped++;
    } catch {
      // gone in between
    }
  }
  return stopped;
}

/**
 * The processes recorded on trial attempts that were still running when their runner stopped, and those any
 * attempt started early for the trial after it (`prestarted`, trials.prestart: the runner may have stopped
 * before that trial's own record named them). Processes that have ended since are skipped by stopLeftovers.
 */
export function leftoversOf(trials: readonly { readonly status: string; readonly details?: TrialDetails }[]): RecordedProcess[] {
  return trials.flatMap((t) => [...(t.status === 'running' ? (t.details?.processes ?? []) : []), ...(t.details?.prestarted ?? [])]);
}
