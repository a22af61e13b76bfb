/** A git repository in a temp dir, removed after the test: write files, commit, read revisions. */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onTestFinished } from 'vitest';

const ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

export interface GitRepo {
  readonly dir: string;
  git(...args: string[]): string;
  write(files: Record<string, string>): Promise<void>;
  /** Write (a null content deletes), commit everything, return the commit id. */
  commit(files: Record<string, string | null>, message?: string): Promise<string>;
}

export async function gitRepo(prefix = 'tandem-git-'): Promise<GitRepo> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: ENV }).trim();
  const write = async (files: Record<string, string | null>): Promise<void> => {
    for (const [file, text] of Object.entries(files)) {
      if (text === null) await rm(join(dir, file), { force: true });
      else {
        await mkdir(dirname(join(dir, file)), { recursive: true });
        await writeFile(join(dir, file), text);
      }
    }
  };
  git('init', '-q', '-b', 'main');
  return {
    dir,
    git,
    write,
    async commit(files, message = 'change') {
      await write(files);
      git('add', '-A');
      git('commit', '-q', '--allow-empty', '-m', message);
      return git('rev-parse', 'HEAD');
    },
  };
}
