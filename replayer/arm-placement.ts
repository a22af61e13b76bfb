/**
 * Moving a started arm onto other CPUs: every thread of every process in its
 * process group (arms are started detached, as group leaders). With
 * `trials.startCpus` a trial's two arms start at once on CPUs of their own and
 * are moved onto their slot's CPUs once ready; a compound deploy command's
 * children started there would otherwise stay there.
 *
 * Why taskset and not a native call: Node has no sched_setaffinity, and
 * `taskset -a -p` (util-linux, already what pins arms at start) does it for
 * every thread of a pid. It is run without a shell, with numbers only.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { cpusOfList } from './arm-cpu-contention.js';

const run = promisify(execFile);

/**
 * The live pids of each of `groups`, by group, from one pass over /proc (field 5 of /proc/PID/stat; zombies,
 * state Z, left out). Read synchronously: a hundred small files take 2–3 ms that way and 30–50 ms through the
 * promise API, and it runs between trials, when no replay shares the thread.
 */
export function processGroupMembers(groups: readonly number[]): Map<number, number[]> {
  const members = new Map(groups.map((group) => [group, [] as number[]]));
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name (field 2) may hold spaces and parentheses: fields are counted after its closing one.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z') members.get(Number(pgrp))?.push(Number(entry));
    } catch {
      // gone in between
    }
  }
  return members;
}

/** A member of `group` that is still there and could not be moved. */
export class GroupMoveError extends Error {
  constructor(
    readonly group: number,
    cause: Error,
  ) {
    super(cause.message, { cause });
  }
}

/** A process group to move, and where. */
export interface GroupMove {
  readonly group: number;
  readonly cpus: string;
}

/**
 * Every thread of every process in each group moved onto its CPUs; resolves to how many processes of each group
 * were moved, in the order given (0: the group has none left, its arm exited in between).
 */
export async function moveProcessGroups(moves: readonly GroupMove[]): Promise<number[]> {
  for (const { group, cpus } of moves) {
    if (cpusOfList(cpus).length === 0 || !Number.isInteger(group) || group <= 1)
      throw new Error(`cannot move process group ${group} to CPUs ${JSON.stringify(cpus)}`);
  }
  const members = processGroupMembers(moves.map((m) => m.group));
  // Every member at once: each taskset is a process started from this one, and between two trials a demo's two arms
  // took 128 ms to move one after the other, 104 ms at once (2026-12-06, a PVM guest).
  const moveMember = async (group: number, pid: number, cpus: string): Promise<number> => {
    try {
      await run('taskset', ['-a', '-p', '-c', cpus, String(pid)]);
      return 1;
    } catch (error) {
      // A member that exited in between is not an error; one that is still there and could not be moved is.
      const gone = await readFile(`/proc/${pid}/stat`, 'utf8').then(
        () => false,
        () => true,
      );
      if (!gone) throw new GroupMoveError(group, error as Error);
      return 0;
    }
  };
  const moveGroup = async ({ group, cpus }: GroupMove): Promise<number> => {
    const moved = await Promise.all((members.get(group) ?? []).map((pid) => moveMember(group, pid, cpus)));
    return moved.reduce((sum, n) => sum + n, 0);
  };
  return Promise.all(moves.map(moveGroup));
}
