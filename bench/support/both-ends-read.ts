/**
 * Reading a 1,000-package workspace graph at two revisions (the triggers
 * bench's `readBothEndsMs`), against two same-run baselines: reading one end
 * from the working tree (a directory walk and a readFile per package.json,
 * what `affected` did before it read both ends), and reading both ends with
 * one `git show rev:path` per file (the obvious way to read a revision; one
 * end is timed and counted twice).
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { seededRandom } from '../../core/index.js';
import { RevisionFiles, loadGraphAtBothEnds, loadWorkspaces, type GraphFiles } from '../../triggers/index.js';
import { median } from './median.js';

const run = promisify(execFile);
const ENV = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };

class WorkingTreeFiles implements GraphFiles {
  readonly revision = 'the working tree';
  readonly #root: string;
  #paths: string[] = [];
  constructor(root: string) {
    this.#root = root;
  }
  async walk(dir = ''): Promise<this> {
    for (const entry of await readdir(join(this.#root, dir), { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) await this.walk(path);
      else this.#paths.push(path);
    }
    return this;
  }
  paths(): string[] {
    return this.#paths;
  }
  async read(paths: readonly string[]): Promise<Map<string, string>> {
    return new Map(await Promise.all(paths.map(async (p) => [p, await readFile(join(this.#root, p), 'utf8')] as [string, string])));
  }
  async readOne(path: string): Promise<string | undefined> {
    return readFile(join(this.#root, path), 'utf8').catch(() => undefined);
  }
}

/** Lists through `git ls-tree`, reads each file with its own `git show`. */
class GitShowFiles implements GraphFiles {
  constructor(
    readonly revision: string,
    readonly repo: string,
    readonly listed: RevisionFiles,
  ) {}
  paths(): Iterable<string> {
    return this.listed.paths();
  }
  async read(paths: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const p of paths) out.set(p, (await run('git', ['show', `${this.revision}:${p}`], { cwd: this.repo })).stdout);
    return out;
  }
  async readOne(path: string): Promise<string | undefined> {
    return this.listed.has(path) ? (await this.read([path])).get(path) : undefined;
  }
}

export async function readBothEndsFigures(): Promise<Record<string, number>> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-workspace-'));
  try {
    const random = seededRandom(5);
    const packages = 1000;
    const manifest = (i: number, extra: number[] = []): string =>
      JSON.stringify({
        name: `@w/p${i}`,
        version: '1.0.0',
        dependencies: Object.fromEntries(
          [...Array.from({ length: i === 0 ? 0 : 1 + Math.floor(random() * 4) }, () => Math.floor(random() * i)), ...extra].map((d) => [`@w/p${d}`, '*']),
        ),
      });
    const files: Record<string, string> = { 'package.json': JSON.stringify({ name: 'root', private: true, workspaces: ['packages/*'] }) };
    for (let i = 0; i < packages; i++)
      Object.assign(files, {
        [`packages/p${i}/package.json`]: manifest(i),
        [`packages/p${i}/src/index.ts`]: `export const p${i} = ${i};\n`,
        [`packages/p${i}/README.md`]: `# p${i}\n`,
      });
    const commit = async (batch: Record<string, string>, message: string): Promise<string> => {
      for (const [file, text] of Object.entries(batch)) {
        await mkdir(dirname(join(dir, file)), { recursive: true });
        await writeFile(join(dir, file), text);
      }
      execFileSync('git', ['add', '-A'], { cwd: dir, env: ENV });
      execFileSync('git', ['commit', '-q', '-m', message], { cwd: dir, env: ENV });
      return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
    };
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
    const base = await commit(files, 'base');
    // The change adds a dependency to 100 packages.
    const changed: Record<string, string> = {};
    for (let k = 0; k < 100; k++) {
      const i = 1 + Math.floor(random() * (packages - 1));
      changed[`packages/p${i}/package.json`] = manifest(i, [Math.floor(random() * i)]);
    }
    const head = await commit(changed, 'head');
    // Packed, as in a clone (a CI checkout): loose objects cost git a file open and inflate each.
    execFileSync('git', ['gc', '-q'], { cwd: dir });

    const both: number[] = [];
    const oneEnd: number[] = [];
    let targets = 0;
    for (let r = 0; r < 5; r++) {
      let t0 = performance.now();
      const loaded = await loadGraphAtBothEnds({ kind: 'workspaces' }, dir, base, head);
      both.push(performance.now() - t0);
      targets = loaded.graph.size;
      t0 = performance.now();
      await loadWorkspaces(await new WorkingTreeFiles(dir).walk(), '');
      oneEnd.push(performance.now() - t0);
    }
    // git show per file: one end read in full (1,001 subprocesses), counted twice for both ends.
    const t0 = performance.now();
    await loadWorkspaces(new GitShowFiles(head, dir, await RevisionFiles.open(dir, head)), '');
    const gitShowMs = 2 * (performance.now() - t0);
    return {
      readBothEndsMs: Number(median(both).toFixed(1)),
      readBothEndsTargets: targets,
      workingTreeOneEndMs: Number(median(oneEnd).toFixed(1)),
      gitShowPerFileBothEndsMs: Number(gitShowMs.toFixed(0)),
      readBothEndsVsWorkingTreeOneEnd: Number((median(both) / median(oneEnd)).toFixed(2)),
      readBothEndsSpeedupVsGitShowPerFile: Number((gitShowMs / median(both)).toFixed(1)),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
