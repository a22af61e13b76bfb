/**
 * What triggers and bisection need from git: the files a change touches, a
 * file's content at a revision, and the revisions of a range. A revision
 * that does not exist is an input error (exit 3), never an empty change.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { InputError } from '../core/index.js';

const run = promisify(execFile);

async function git(cwd: string, args: readonly string[]): Promise<string> {
  try {
    const { stdout } = await run('git', [...args], { cwd, maxBuffer: 256 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? '').trim();
    throw new InputError(`git ${args.join(' ')} failed in ${cwd}: ${stderr || (error as Error).message}`, { cause: error });
  }
}

/** The full commit id of `rev`; an InputError naming the revision when it does not exist. */
export async function resolveRevision(cwd: string, rev: string, flag: string): Promise<string> {
  if (rev.startsWith('-')) throw new InputError(`${flag} ${JSON.stringify(rev)} is not a revision`);
  try {
    return (await git(cwd, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`])).trim();
  } catch {
    throw new InputError(`${flag} ${JSON.stringify(rev)} is not a revision of the repository at ${cwd} (git rev-parse found no such commit)`);
  }
}

/** Files changed between two revisions (added, modified, deleted, both sides of renames). */
export async function changedFiles(cwd: string, base: string, head: string): Promise<string[]> {
  const out = await git(cwd, ['diff', '--name-only', '--no-renames', '-z', base, head]);
  return out.split('\0').filter((f) => f !== '');
}

/** The content of `file` at `rev`, or undefined when it does not exist there. */
export async function fileAt(cwd: string, rev: string, file: string): Promise<string | undefined> {
  try {
    return await git(cwd, ['show', `${rev}:${file}`]);
  } catch {
    return undefined;
  }
}

/** Commits after `good` up to and including `bad`, oldest first (first-parent line). */
export async function revisionsBetween(cwd: string, good: string, bad: string): Promise<string[]> {
  return (await git(cwd, ['rev-list', '--reverse', '--first-parent', `${good}..${bad}`])).split('\n').filter((r) => r !== '');
}

export interface CommitChange {
  readonly commit: string;
  readonly parent: string;
  readonly timeMs: number;
  readonly files: readonly string[];
}

/** Commits since `sinceMs` (first-parent, newest first) with the files each changed. */
export async function commitsSince(cwd: string, sinceMs: number): Promise<CommitChange[]> {
  const out = await git(cwd, ['log', '--first-parent', `--since=${new Date(sinceMs).toISOString()}`, '--format=%x01%H %P %ct', '--name-only', '--no-renames']);
  return out
    .split('\x01')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const [header, ...files] = block.trim().split('\n');
      // "<commit> <parents…> <time>": a root commit has no parent, a merge several (the first is the line's).
      const parts = header!.split(' ');
      return {
        commit: parts[0]!,
        parent: parts.length > 2 ? parts[1]! : '',
        timeMs: Number(parts[parts.length - 1]) * 1000,
        files: files.filter((f) => f !== ''),
      };
    });
}
