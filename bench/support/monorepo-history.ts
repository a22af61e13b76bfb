/**
 * A generated monorepo history for the triggers bench: 70 workspace
 * packages in a DAG, external packages with transitive dependencies, and
 * commits of every kind a real history has — docs, tests, snapshots and
 * stories inside packages, docs at the root, sources, a source with its
 * README, lockfile bumps (direct and transitive), and dependency additions.
 * Each commit carries its ground truth: the packages whose own sources or
 * resolved dependency closure it changed. The lockfile is written as yarn
 * v1, pnpm v9 or npm v3, so one generator serves all three kinds.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { seededRandom } from '../../core/index.js';

export type LockKind = 'yarn' | 'pnpm' | 'npm';

interface Model {
  /** Internal dependencies of each package (indices of lower-numbered packages). */
  deps: Set<number>[];
  /** External packages each package declares. */
  externals: string[][];
  /** External package → its version and the externals it depends on. */
  ext: Map<string, { version: number; deps: string[] }>;
}

export interface HistoryCommit {
  readonly commit: string;
  readonly kind: string;
  /** Packages whose sources or resolved dependency closure changed (before closing over dependents). */
  readonly changedPackages: readonly number[];
  /** Internal dependency edges at the commit (package → its dependencies), for the reference closure. */
  readonly deps: readonly (readonly number[])[];
}

export const PACKAGES = 70;
const EXTERNALS = 24;
const name = (i: number): string => `@m/p${i}`;
const ENV = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };

function externalClosure(model: Model, roots: readonly string[]): Set<string> {
  const seen = new Set<string>(roots);
  const queue = [...roots];
  while (queue.length > 0) for (const d of model.ext.get(queue.pop()!)!.deps) if (!seen.has(d)) (seen.add(d), queue.push(d));
  return seen;
}

function lockfile(kind: LockKind, model: Model): [string, string] {
  const v = (e: string): string => `1.${model.ext.get(e)!.version}.0`;
  const exts = [...model.ext.keys()].sort();
  if (kind === 'yarn') {
    const lines = ['# yarn lockfile v1', '', ''];
    for (const e of exts) {
      lines.push(`${e}@^1.0.0:`, `  version "${v(e)}"`, `  resolved "https://registry.example/${e}/-/${e}-${v(e)}.tgz"`, `  integrity sha512-${e}${v(e)}`);
      const deps = model.ext.get(e)!.deps;
      if (deps.length > 0) lines.push('  dependencies:', ...deps.map((d) => `    ${d} "^1.0.0"`));
      lines.push('');
    }
    return ['yarn.lock', lines.join('\n')];
  }
  if (kind === 'pnpm') {
    const lines = ["lockfileVersion: '9.0'", 'importers:', '  .: {}'];
    model.externals.forEach((list, i) => {
      lines.push(`  packages/p${i}:`, '    dependencies:');
      for (const e of list) lines.push(`      ${e}: { specifier: ^1.0.0, version: ${v(e)} }`);
      for (const d of model.deps[i]!) lines.push(`      '${name(d)}': { specifier: 'workspace:*', version: 'link:../p${d}' }`);
    });
    lines.push('packages:', ...exts.flatMap((e) => [`  ${e}@${v(e)}:`, `    resolution: { integrity: sha512-${e}${v(e)} }`]));
    lines.push(
      'snapshots:',
      ...exts.flatMap((e) => [
        `  ${e}@${v(e)}:`,
        ...(model.ext.get(e)!.deps.length > 0 ? ['    dependencies:', ...model.ext.get(e)!.deps.map((d) => `      ${d}: ${v(d)}`)] : []),
      ]),
    );
    return ['pnpm-lock.yaml', `${lines.join('\n')}\n`];
  }
  const packages: Record<string, unknown> = { '': { name: 'root', workspaces: ['packages/*'] } };
  for (let i = 0; i < PACKAGES; i++) packages[`node_modules/${name(i)}`] = { resolved: `packages/p${i}`, link: true };
  for (const e of exts)
    packages[`node_modules/${e}`] = {
      version: v(e),
      resolved: `https://registry.example/${e}-${v(e)}.tgz`,
      integrity: `sha512-${e}${v(e)}`,
      dependencies: Object.fromEntries(model.ext.get(e)!.deps.map((d) => [d, '^1.0.0'])),
    };
  return ['package-lock.json', JSON.stringify({ name: 'root', lockfileVersion: 3, packages }, null, 2)];
}

function manifest(model: Model, i: number): string {
  return JSON.stringify(
    {
      name: name(i),
      version: '1.0.0',
      dependencies: Object.fromEntries([...[...model.deps[i]!].map((d) => [name(d), '*']), ...model.externals[i]!.map((e) => [e, '^1.0.0'])]),
    },
    null,
    2,
  );
}

/** Generate `commits` commits (after an initial one) in `dir`, with the lockfile of `kind`. */
export async function generateHistory(dir: string, kind: LockKind, commits: number, seed: number): Promise<HistoryCommit[]> {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const ext = new Map<string, { version: number; deps: string[] }>();
  for (let k = EXTERNALS - 1; k >= 0; k--)
    ext.set(`ext-${k}`, { version: 0, deps: Array.from({ length: EXTERNALS - 1 - k }, (_, j) => `ext-${k + 1 + j}`).filter(() => random() < 0.12) });
  const model: Model = {
    deps: Array.from({ length: PACKAGES }, (_, i) => new Set(Array.from({ length: i === 0 ? 0 : Math.floor(random() * 3) }, () => Math.floor(random() * i)))),
    externals: Array.from({ length: PACKAGES }, () => [
      ...new Set(Array.from({ length: 1 + Math.floor(random() * 2) }, () => `ext-${Math.floor(random() * EXTERNALS)}`)),
    ]),
    ext,
  };
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: ENV }).trim();
  const write = async (files: Record<string, string>): Promise<void> => {
    for (const [file, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, file)), { recursive: true });
      await writeFile(join(dir, file), text);
    }
  };
  const counter = { n: 0 };
  const edit = (): string => `// edit ${++counter.n}\n`;
  git('init', '-q', '-b', 'main');
  const initial: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'root', private: true, workspaces: ['packages/*'] }),
    ...(kind === 'pnpm' ? { 'pnpm-workspace.yaml': 'packages:\n  - "packages/*"\n' } : {}),
    'docs/architecture.md': '# architecture\n',
    'tandem.config.yaml': 'triggers: { graph: { kind: workspaces } }\nworkloadTemplates:\n  - { targets: ["@m/*"], workload: {} }\n',
  };
  for (let i = 0; i < PACKAGES; i++)
    Object.assign(initial, {
      [`packages/p${i}/package.json`]: manifest(model, i),
      [`packages/p${i}/src/index.ts`]: edit(),
      [`packages/p${i}/README.md`]: `# p${i}\n`,
    });
  const [lockName, lockText] = lockfile(kind, model);
  await write({ ...initial, [lockName]: lockText });
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');

  const kinds = [
    'docs',
    'docs',
    'root-docs',
    'tests',
    'tests',
    'snapshots',
    'stories',
    'source',
    'source',
    'source',
    'source+readme',
    'lockfile',
    'lockfile',
    'dependency',
  ];
  const history: HistoryCommit[] = [];
  for (let c = 0; c < commits; c++) {
    // Every kind appears at least once in the first rounds; then at random.
    const kindOf = c < kinds.length ? kinds[c]! : pick(kinds);
    const p = Math.floor(random() * PACKAGES);
    const files: Record<string, string> = {};
    let changed: number[] = [];
    if (kindOf === 'docs') files[`packages/p${p}/README.md`] = `# p${p}\n${edit()}`;
    else if (kindOf === 'root-docs') files['docs/architecture.md'] = `# architecture\n${edit()}`;
    else if (kindOf === 'tests') files[`packages/p${p}/src/index.test.ts`] = edit();
    else if (kindOf === 'snapshots') files[`packages/p${p}/src/__snapshots__/index.test.ts.snap`] = edit();
    else if (kindOf === 'stories') files[`packages/p${p}/src/button.stories.tsx`] = edit();
    else if (kindOf === 'source' || kindOf === 'source+readme') {
      files[`packages/p${p}/src/module${c % 3}.ts`] = edit();
      if (kindOf === 'source+readme') files[`packages/p${p}/README.md`] = `# p${p}\n${edit()}`;
      changed = [p];
    } else if (kindOf === 'lockfile') {
      const bumped = `ext-${Math.floor(random() * EXTERNALS)}`;
      model.ext.get(bumped)!.version++;
      changed = model.externals.flatMap((list, i) => (externalClosure(model, list).has(bumped) ? [i] : []));
    } else {
      // A package starts to use another (lower-numbered, so the graph stays a DAG), with a source change using it.
      const user = 1 + Math.floor(random() * (PACKAGES - 1));
      model.deps[user]!.add(Math.floor(random() * user));
      files[`packages/p${user}/package.json`] = manifest(model, user);
      files[`packages/p${user}/src/index.ts`] = edit();
      changed = [user];
    }
    const [lock, text] = lockfile(kind, model);
    files[lock] = text;
    await write(files);
    git('add', '-A');
    git('commit', '-q', '-m', `${kindOf} ${c}`);
    history.push({ commit: git('rev-parse', 'HEAD'), kind: kindOf, changedPackages: changed, deps: model.deps.map((d) => [...d]) });
  }
  return history;
}

/** The reference: packages reachable from the changed ones through dependents, in the graph before or after the commit. */
export function reachable(changed: readonly number[], before: readonly (readonly number[])[], after: readonly (readonly number[])[]): Set<number> {
  const dependents = Array.from({ length: PACKAGES }, () => new Set<number>());
  for (const graph of [before, after]) graph.forEach((deps, i) => deps.forEach((d) => dependents[d]!.add(i)));
  const seen = new Set(changed);
  const queue = [...changed];
  while (queue.length > 0) for (const next of dependents[queue.pop()!]!) if (!seen.has(next)) (seen.add(next), queue.push(next));
  return seen;
}
