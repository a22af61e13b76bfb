/**
 * Selection on real git repositories in temp dirs, as a monorepo user meets
 * it: every lockfile kind, the graph at both ends of a change, the graph
 * exports of Nx, Turborepo and Bazel, files in ignored inputs inside a
 * target, workload templates, and output a CI can read.
 */
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Selection } from '../../triggers/index.js';
import { runCli } from '../support/cli.js';
import { gitRepo, type GitRepo } from '../support/git-repo.js';
import { pnpmV9, yarnBerry, yarnV1 } from '../support/lockfile-texts.js';

const pkg = (name: string, fields: Record<string, unknown> = {}): string => JSON.stringify({ name, version: '1.0.0', ...fields });

/** A yarn workspace: @x/a uses express; @x/b depends on @x/a (and has it as a devDependency when asked); @x/c uses left-pad. */
async function workspace(config: string[] = [], options: { lockfile?: Record<string, string>; bDevDependsOnA?: boolean } = {}): Promise<GitRepo> {
  const repo = await gitRepo('tandem-monorepo-');
  await repo.commit({
    'package.json': JSON.stringify({ name: 'root', private: true, workspaces: ['packages/*'] }),
    ...(options.lockfile ?? { 'yarn.lock': yarnV1('6.11.0') }),
    '.gitignore': '.tandem/\n',
    'packages/a/package.json': pkg('@x/a', { dependencies: { express: '^4.0.0' } }),
    'packages/a/index.js': 'export const a = 1;\n',
    'packages/a/README.md': '# a\n',
    'packages/b/package.json': pkg('@x/b', options.bDevDependsOnA ? { devDependencies: { '@x/a': '*' } } : { dependencies: { '@x/a': '*' } }),
    'packages/b/index.js': 'export const b = 1;\n',
    'packages/c/package.json': pkg('@x/c', { dependencies: { 'left-pad': '^1.0.0' } }),
    'packages/c/index.js': 'export const c = 1;\n',
    'tandem.config.yaml': [
      'triggers:',
      '  graph: { kind: workspaces }',
      ...config,
      'workloadTemplates:',
      '  - targets: ["@x/*"]',
      '    workload: { name: "w{name}" }',
      '',
    ].join('\n'),
  });
  return repo;
}

async function affected(repo: GitRepo, base = 'HEAD~1', head = 'HEAD'): Promise<Selection> {
  const result = await runCli(['affected', '--base', base, '--head', head, '--json'], { cwd: repo.dir });
  expect(result.code, result.err).toBe(0);
  return JSON.parse(result.out) as Selection;
}

const names = (list: readonly { workload: string }[]): string[] => list.map((s) => s.workload).sort();

describe('lockfiles of every kind', () => {
  it('yarn.lock v1 and Berry: a bumped transitive package selects the packages holding it and their dependents', async () => {
    for (const lock of [yarnV1, yarnBerry]) {
      const repo = await workspace([], { lockfile: { 'yarn.lock': lock('6.11.0') } });
      await repo.commit({ 'yarn.lock': lock('6.11.1') });
      const selection = await affected(repo);
      expect(names(selection.selected)).toEqual(['wa', 'wb']);
      // Issue 32: the reason names what was bumped (qs, under the declared express), not the declared dependency.
      expect(selection.selected.find((s) => s.workload === 'wb')!.reasons[0]).toMatchObject({
        kind: 'graph',
        file: 'yarn.lock',
        packages: ['qs'],
        path: ['yarn.lock', '@x/a', '@x/b'],
        message: 'yarn.lock (qs) reaches @x/b through @x/a',
      });
      expect(selection.skipped.find((s) => s.workload === 'wc')!.reason.kind).toBe('unreached');
    }
  });

  it('pnpm-lock.yaml: the importers whose dependencies changed, from pnpm-workspace.yaml', async () => {
    const repo = await gitRepo('tandem-pnpm-');
    await repo.commit({
      'package.json': pkg('root'),
      'pnpm-workspace.yaml': 'packages:\n  - "packages/*"\n',
      'pnpm-lock.yaml': pnpmV9('6.11.0'),
      'packages/a/package.json': pkg('@x/a', { dependencies: { express: '^4.0.0' } }),
      'packages/b/package.json': pkg('@x/b', { dependencies: { '@x/a': 'workspace:*' } }),
      'packages/c/package.json': pkg('@x/c', { dependencies: { 'left-pad': '^1.0.0' } }),
      'tandem.config.yaml':
        'triggers: { graph: { kind: workspaces } }\nworkloads:\n  - { name: wa, triggers: { targets: ["@x/a"] } }\n  - { name: wb, triggers: { targets: ["@x/b"] } }\n  - { name: wc, triggers: { targets: ["@x/c"] } }\n',
    });
    await repo.commit({ 'pnpm-lock.yaml': pnpmV9('6.11.1') });
    expect(names((await affected(repo)).selected)).toEqual(['wa', 'wb']);
  });

  it('an unreadable lockfile selects everything, saying why', async () => {
    const repo = await workspace();
    await repo.commit({ 'yarn.lock': 'express@^4.0.0:\n  version "4.18.0"\n    bad: indentation\n' });
    const selection = await affected(repo);
    expect(names(selection.selected)).toEqual(['wa', 'wb', 'wc']);
    expect(selection.selected[0]!.reasons[0]).toMatchObject({
      kind: 'global',
      file: 'yarn.lock',
      message: expect.stringMatching(/^global input yarn\.lock changed and could not be narrowed \(yarn\.lock at head is not a readable yarn lockfile/),
    });
  });
});

describe('the build graph at both ends of a change', () => {
  it('a package the change adds (or removes) selects the same from a checkout of either end', async () => {
    const repo = await workspace();
    const base = repo.git('rev-parse', 'HEAD');
    // A new package depending on @x/a: its files are owned at head only.
    const head = await repo.commit({
      'packages/d/package.json': pkg('@x/d', { dependencies: { '@x/a': '*' } }),
      'packages/d/index.js': 'export const d = 1;\n',
    });
    const atHead = await affected(repo, base, head);
    expect(names(atHead.selected)).toEqual(['wd']);
    expect(atHead.selected[0]!.reasons[0]!.message).toBe('packages/d/index.js is in target @x/d');
    repo.git('checkout', '-q', base);
    expect(await affected(repo, base, head)).toEqual(atHead);
    // Removing @x/b, with a change to @x/a, from a checkout of the head (where @x/b no longer exists).
    repo.git('checkout', '-q', 'main');
    const removal = await repo.commit({ 'packages/b/package.json': null, 'packages/b/index.js': null, 'packages/a/index.js': 'export const a = 2;\n' });
    const removed = await affected(repo, head, removal);
    expect(names(removed.selected)).toEqual(['wa', 'wb', 'wd']);
    expect(removed.selected.find((s) => s.workload === 'wb')!.reasons.map((r) => r.kind)).toEqual(['graph']);
  });

  it('labels dev-dependency edges in the path', async () => {
    const repo = await workspace([], { bDevDependsOnA: true });
    await repo.commit({ 'packages/a/index.js': 'export const a = 2;\n' });
    const wb = (await affected(repo)).selected.find((s) => s.workload === 'wb')!;
    expect(wb.reasons[0]).toMatchObject({
      path: ['packages/a/index.js', '@x/a', '@x/b'],
      edges: ['devDependency'],
      message: 'packages/a/index.js reaches @x/b through @x/a (@x/b has @x/a as a devDependency)',
    });
  });
});

describe('inputs inside targets', () => {
  it('a README, a test or a snapshot inside a package selects nothing, and says which input set it fell in', async () => {
    const repo = await workspace();
    await repo.commit({ 'packages/a/README.md': '# a, edited\n', 'packages/a/src/index.test.ts': 'test\n', 'packages/a/__snapshots__/x.snap': 'snap\n' });
    const selection = await affected(repo);
    expect(selection.selected).toEqual([]);
    expect(selection.ignoredFiles).toEqual([
      { file: 'packages/a/README.md', target: '@x/a', inputSet: 'docs' },
      { file: 'packages/a/__snapshots__/x.snap', target: '@x/a', inputSet: 'snapshots' },
      { file: 'packages/a/src/index.test.ts', target: '@x/a', inputSet: 'tests' },
    ]);
    expect(selection.skipped.find((s) => s.workload === 'wb')!.reason).toMatchObject({
      kind: 'ignored',
      target: '@x/a',
      path: [expect.any(String), '@x/a', '@x/b'],
    });
    const text = await runCli(['affected', '--base', 'HEAD~1'], { cwd: repo.dir });
    expect(text.out).toMatch(/3 changed file\(s\) between \w+ and \w+; 3 in ignored inputs \(docs, snapshots, tests\)/);
    expect(text.out).toMatch(/ignored {3}packages\/a\/README\.md: docs of @x\/a/);
  });

  it('overridable per target; with a doc and a source changed, the cause shown is the source', async () => {
    const repo = await workspace(['  targetInputs:', '    - { targets: ["@x/a"], ignoredInputs: [docs] }']);
    await repo.commit({ 'packages/a/src/index.test.ts': 'test\n' });
    expect(names((await affected(repo)).selected)).toEqual(['wa', 'wb']);
    const both = await workspace(['  ignoredInputs: []']);
    await both.commit({ 'packages/a/README.md': '# a, edited\n', 'packages/a/index.js': 'export const a = 2;\n' });
    expect((await affected(both)).selected.find((s) => s.workload === 'wb')!.reasons[0]!.file).toBe('packages/a/index.js');
  });

  it('globalInputs extend the defaults or replace them', async () => {
    const extended = await workspace(['  globalInputs: { extend: [".nvmrc"] }']);
    await extended.commit({ '.nvmrc': '20\n' });
    expect((await affected(extended)).selected[0]!.reasons[0]).toMatchObject({ kind: 'global', file: '.nvmrc' });
    await extended.commit({ 'tsconfig.json': '{}\n' });
    expect((await affected(extended)).selected[0]!.reasons[0]).toMatchObject({ kind: 'global', file: 'tsconfig.json' });
    const replaced = await workspace(['  globalInputs: [".nvmrc"]', '  ignore: ["tsconfig.json"]']);
    await replaced.commit({ 'tsconfig.json': '{}\n' });
    expect((await affected(replaced)).selected).toEqual([]);
  });
});

describe('graph exports users already have', () => {
  const exportRepo = async (kind: string, fixture: string, files: Record<string, string>, workloads: Record<string, string>): Promise<GitRepo> => {
    const repo = await gitRepo(`tandem-${kind}-`);
    await copyFile(new URL(`./fixtures/${fixture}`, import.meta.url), join(repo.dir, fixture));
    await repo.commit({
      ...files,
      'tandem.config.yaml': [
        `triggers: { graph: { kind: ${kind}, file: ${fixture} } }`,
        'workloads:',
        ...Object.entries(workloads).map(([w, target]) => `  - { name: ${w}, triggers: { targets: ["${target}"] } }`),
        '',
      ].join('\n'),
    });
    return repo;
  };

  it('Nx: a library change reaches the apps through its project graph', async () => {
    const repo = await exportRepo('nx', 'nx-graph.json', { 'libs/features/src/index.ts': '1\n' }, { ranking: 'ranking', api: 'api' });
    await repo.commit({ 'libs/features/src/index.ts': '2\n' });
    const selection = await affected(repo);
    expect(selection.selected.find((s) => s.workload === 'api')!.reasons[0]).toMatchObject({
      path: ['libs/features/src/index.ts', 'features', 'ranking', 'api'],
      edges: ['dependency', 'nx dynamic'],
    });
  });

  it('Turborepo: task dependencies across packages', async () => {
    const repo = await exportRepo('turbo', 'turbo-dry.json', { 'packages/features/src/index.ts': '1\n' }, { ranking: '@serving/ranking', api: '@serving/api' });
    await repo.commit({ 'packages/features/src/index.ts': '2\n' });
    expect(names((await affected(repo)).selected)).toEqual(['api', 'ranking']);
  });

  it('Bazel: a source file of a genrule reaches the service through the generated file', async () => {
    const repo = await exportRepo('bazel', 'bazel-query.jsonl', { 'libs/features/schema.json': '{}\n' }, { ranking: '//services/ranking:ranking' });
    await repo.commit({ 'libs/features/schema.json': '{"v":2}\n' });
    expect((await affected(repo)).selected[0]!.path).toEqual(['libs/features/schema.json', '//libs/features:schema', '//services/ranking:ranking']);
  });

  it('an export generated in CI and not committed is read from the working tree, with a note', async () => {
    const repo = await exportRepo(
      'nx',
      'nx-graph.json',
      { 'libs/features/src/index.ts': '1\n', '.gitignore': 'nx-graph.json\n.tandem/\n' },
      { ranking: 'ranking' },
    );
    await repo.commit({ 'libs/features/src/index.ts': '2\n' });
    const selection = await affected(repo);
    expect(names(selection.selected)).toEqual(['ranking']);
    expect(selection.notes).toEqual(['nx-graph.json is not committed at base or head: read from the working tree (generate it at the head of the change)']);
  });
});

describe('output a CI can read', () => {
  it('human output groups workloads under their reason; templates make one workload per package', async () => {
    const repo = await workspace();
    await repo.commit({ 'packages/a/index.js': 'export const a = 2;\n' });
    const text = await runCli(['affected', '--base', 'HEAD~1'], { cwd: repo.dir });
    expect(text.out.split('\n').slice(1).join('\n')).toBe(
      [
        'selected 2:',
        '  packages/a/index.js changed, through the build graph — 2:',
        '      wa',
        '      wb (via @x/a → @x/b)',
        'skipped 1:',
        '  no changed file reaches its targets, and no changed config setting it reads — 1:',
        '      wc',
        '',
      ].join('\n'),
    );
  });

  it('templated workloads are submitted and run like written ones (no tier needed: it defaults to the name)', async () => {
    const repo = await workspace();
    await repo.commit({ 'packages/a/index.js': 'export const a = 2;\n' });
    const result = await runCli(['submit', '--base', 'HEAD~1', '--noop', '--json'], { cwd: repo.dir });
    expect(result.code, result.err).toBe(0);
    const { experiments } = JSON.parse(result.out) as { experiments: { workload: string; status: string }[] };
    expect(experiments.map((e) => [e.workload, e.status]).sort()).toEqual([
      ['wa', 'passed'],
      ['wb', 'passed'],
    ]);
  });

  it('errors under --json are JSON: a bad config names every problem', async () => {
    const repo = await workspace(['  ignoredInputs: [doc]']);
    const result = await runCli(['affected', '--base', 'HEAD', '--json'], { cwd: repo.dir });
    expect(result.code).toBe(3);
    expect(JSON.parse(result.out)).toEqual({
      error: {
        code: 'TANDEM_ERR_CONFIG',
        exitCode: 3,
        message: expect.any(String),
        problems: [expect.stringMatching(/triggers\.ignoredInputs\[0\] "doc" is not an input set \(known: docs, tests, snapshots, stories\)/)],
      },
    });
    const usage = await runCli(['affected', '--json'], { cwd: repo.dir });
    expect(usage.code).toBe(3);
    expect(JSON.parse(usage.out)).toMatchObject({ error: { code: 'TANDEM_ERR_USAGE', message: expect.stringMatching(/--base/) } });
  });
});
