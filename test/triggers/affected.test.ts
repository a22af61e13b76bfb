import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { dashboardOver } from '../support/dashboard-fixtures.js';
import { createLocalStore } from '../../store/index.js';
import type { Selection } from '../../triggers/index.js';
import { runCli } from '../support/cli.js';

/** A git repository in a temp dir with an npm workspace: a ← b (b depends on a), c alone, and a config file. */
async function repo(extraConfig: string[] = []): Promise<{ dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-affected-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const git = (...args: string[]): string =>
    execFileSync('git', args, {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    }).trim();
  const write = async (files: Record<string, string>): Promise<void> => {
    for (const [file, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, file)), { recursive: true });
      await writeFile(join(dir, file), text);
    }
  };
  git('init', '-q', '-b', 'main');
  await write({
    'package.json': JSON.stringify({ name: 'root', private: true, workspaces: ['packages/*'] }),
    'package-lock.json': '{}',
    '.gitignore': '.tandem/\n',
    'packages/a/package.json': JSON.stringify({ name: '@x/a' }),
    'packages/a/index.js': 'export const a = 1;\n',
    'packages/b/package.json': JSON.stringify({ name: '@x/b', dependencies: { '@x/a': '*', lodash: '^4' } }),
    'packages/b/index.js': 'export const b = 1;\n',
    'packages/c/package.json': JSON.stringify({ name: '@x/c' }),
    'packages/c/index.js': 'export const c = 1;\n',
    'config/ranking.yaml': 'model:\n  depth: 3\nlogging:\n  level: info\n',
    'docs/guide.md': '# guide\n',
    'tandem.config.yaml': [
      'triggers:',
      '  graph: { kind: workspaces }',
      '  globalInputs: [package-lock.json]',
      ...extraConfig,
      'workloads:',
      '  - { name: wa, tier: a, triggers: { targets: ["@x/a"] } }',
      '  - { name: wb, tier: b, triggers: { targets: ["@x/b"] } }',
      '  - { name: wc, tier: c, triggers: { targets: ["@x/c"], priority: low, sampleProbability: 0.5 } }',
      '  - { name: ranking, tier: ranking, triggers: { configFiles: ["config/*.yaml"] } }',
      '  - { name: search, tier: search, triggers: { configFiles: ["config/*.yaml"] } }',
      '',
    ].join('\n'),
  });
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  return { dir };
}

async function commit(dir: string, files: Record<string, string>): Promise<string> {
  for (const [file, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await writeFile(join(dir, file), text);
  }
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
  execFileSync('git', ['add', '-A'], { cwd: dir, env });
  execFileSync('git', ['commit', '-q', '-m', 'change'], { cwd: dir, env });
  return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
}

async function affected(dir: string, base = 'HEAD~1'): Promise<Selection> {
  const result = await runCli(['affected', '--base', base, '--head', 'HEAD', '--json'], { cwd: dir });
  expect(result.code, result.err).toBe(0);
  return JSON.parse(result.out) as Selection;
}

const names = (list: readonly { workload: string }[]): string[] => list.map((s) => s.workload).sort();

describe('tandem affected', () => {
  it('selects the changed package plus its dependents, with the shortest path, and says why the rest were skipped', async () => {
    const { dir } = await repo();
    await commit(dir, { 'packages/a/index.js': 'export const a = 2;\n' });
    const selection = await affected(dir);
    expect(names(selection.selected)).toEqual(['wa', 'wb']);
    expect(selection.selected.find((s) => s.workload === 'wb')!.path).toEqual(['packages/a/index.js', '@x/a', '@x/b']);
    expect(selection.selected.find((s) => s.workload === 'wb')!.reasons[0]).toEqual({
      kind: 'graph',
      file: 'packages/a/index.js',
      path: ['packages/a/index.js', '@x/a', '@x/b'],
      edges: ['dependency'],
      message: 'packages/a/index.js reaches @x/b through @x/a',
    });
    expect(selection).not.toHaveProperty('config');
    expect(selection.skipped.find((s) => s.workload === 'wc')!.reason).toMatchObject({
      kind: 'unreached',
      message: expect.stringMatching(/no changed file reaches its targets/),
    });
    const text = await runCli(['affected', '--base', 'HEAD~1'], { cwd: dir });
    // Grouped by cause: one heading for the changed file, each workload under it with its path.
    expect(text.out).toMatch(/selected 2:\n  packages\/a\/index\.js changed, through the build graph — 2:\n      wa\n      wb \(via @x\/a → @x\/b\)/);
  });

  it('selects everything for a global input or an unowned file (unless ignored), saying so', async () => {
    const { dir } = await repo();
    await commit(dir, { 'package-lock.json': '{"lockfileVersion":3}' });
    const lock = await affected(dir);
    expect(names(lock.selected).length + names(lock.deferred).length).toBe(5);
    expect(lock.selected.find((s) => s.workload === 'wa')!.reasons[0]).toMatchObject({
      kind: 'global',
      file: 'package-lock.json',
      message: expect.stringMatching(
        /^global input package-lock\.json changed and could not be narrowed \(package-lock\.json at base is not a readable npm lockfile/,
      ),
    });
    await commit(dir, { 'scripts/build.sh': 'echo build\n' });
    const unowned = await affected(dir);
    expect(unowned.selected.find((s) => s.workload === 'wa')!.reasons[0]).toMatchObject({
      kind: 'unowned',
      file: 'scripts/build.sh',
      message: expect.stringMatching(/scripts\/build\.sh is owned by no build target \(conservative/),
    });
    // Issue 32: seven unowned files were seven reasons per workload (490 for 70 workloads); now one each, listing them.
    await commit(dir, Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`.github/workflows/w${i}.yml`, `on: push # ${i}\n`])));
    const many = await affected(dir);
    const wa = many.selected.find((s) => s.workload === 'wa')!;
    expect(wa.reasons.filter((r) => r.kind === 'unowned')).toHaveLength(1);
    expect(wa.reasons[0]!.files).toHaveLength(7);
    expect(wa.reasons[0]!.message).toMatch(/^\.github\/workflows\/w0\.yml, .*, … \(7 in all\) are owned by no build target/);
    // Selected entries name the targets they stand for.
    expect(wa.targets).toEqual(['@x/a']);
    // A doc outside every package falls in the default docs input set, relative to the repository root.
    await commit(dir, { 'docs/guide.md': '# guide, edited\n' });
    const docs = await affected(dir);
    expect(docs.selected).toEqual([]);
    expect(docs.ignoredFiles).toEqual([{ file: 'docs/guide.md', inputSet: 'docs' }]);

    const ignored = await repo(['  ignore: ["scripts/**"]']);
    await commit(ignored.dir, { 'scripts/build.sh': 'echo build\n' });
    const result = await affected(ignored.dir);
    expect(result.selected).toEqual([]);
    expect(result.ignoredFiles).toEqual([{ file: 'scripts/build.sh', inputSet: 'triggers.ignore' }]);
  });

  it('refuses a base revision that does not exist with exit 3, never an empty selection', async () => {
    const { dir } = await repo();
    const result = await runCli(['affected', '--base', 'no-such-branch', '--json'], { cwd: dir });
    expect(result.code).toBe(3);
    expect(result.err).toMatch(/--base "no-such-branch" is not a revision of the repository/);
    // Under --json the error is JSON on stdout too, for a CI that parses it.
    expect(JSON.parse(result.out)).toEqual({
      error: { code: 'TANDEM_ERR_INPUT', exitCode: 3, message: expect.stringMatching(/--base "no-such-branch" is not a revision/) },
    });
  });

  it('selects by config consumption: the setting a service read, falling back to the file without per-setting evidence', async () => {
    const { dir } = await repo();
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    const now = Date.now();
    await store.configReads.append([
      { service: 'ranking', file: 'config/ranking.yaml', setting: 'model.depth', timeMs: now - 60_000 },
      { service: 'search', file: 'config/ranking.yaml', setting: '', timeMs: now - 60_000 },
    ]);
    await store.close();
    await commit(dir, { 'config/ranking.yaml': 'model:\n  depth: 3\nlogging:\n  level: debug\n' });
    const logging = await affected(dir);
    // ranking only read model.depth: a logging change is suppressed; search has only file-level evidence.
    expect(names(logging.selected)).toEqual(['search']);
    expect(logging.selected[0]!.reasons[0]).toMatchObject({
      kind: 'config',
      level: 'file',
      file: 'config/ranking.yaml',
      message: expect.stringMatching(/config config\/ranking\.yaml changed and search read it \(file level: no per-setting evidence\)/),
    });
    await commit(dir, { 'config/ranking.yaml': 'model:\n  depth: 4\nlogging:\n  level: debug\n' });
    const depth = await affected(dir);
    expect(names(depth.selected)).toEqual(['ranking', 'search']);
    expect(depth.selected.find((s) => s.workload === 'ranking')!.reasons[0]).toEqual({
      kind: 'config',
      level: 'setting',
      file: 'config/ranking.yaml',
      settings: ['model.depth'],
      message: 'config config/ranking.yaml: ranking read changed setting(s) model.depth',
    });
  });

  it('submits what a change selects (inline: runs and waits), records deferred workloads, and summarizes in Markdown', async () => {
    const { dir } = await repo();
    await commit(dir, { 'packages/a/index.js': 'export const a = 3;\n', 'packages/c/index.js': 'export const c = 3;\n' });
    const json = await runCli(['submit', '--base', 'HEAD~1', '--stage', 'diff', '--noop', '--json'], { cwd: dir });
    expect(json.code, json.err).toBe(0);
    const result = JSON.parse(json.out) as { selection: Selection; experiments: { workload: string; status: string; reason?: string }[] };
    // The selection is printed without the config it expanded (a store password must not reach a CI log).
    expect(result.selection).not.toHaveProperty('config');
    const byWorkload = new Map(result.experiments.map((e) => [e.workload, e]));
    expect(byWorkload.get('wa')!.status).toBe('passed');
    expect(byWorkload.get('wb')!.status).toBe('passed');
    const wc = byWorkload.get('wc')!;
    expect(['passed', 'deferred']).toContain(wc.status);
    if (wc.status === 'deferred') expect(wc.reason).toMatch(/sampled out at diff time/);
    expect(byWorkload.has('ranking')).toBe(false);
    // The arms were given the change's two ends as their {revision}: base to control, head to treatment.
    const [base, head] = ['HEAD~1', 'HEAD'].map((rev) => execFileSync('git', ['rev-parse', rev], { cwd: dir, encoding: 'utf8' }).trim());
    const stored = createLocalStore({ dir: join(dir, '.tandem') });
    const idOf = (workload: string): string => (result.experiments as { id?: string; workload: string }[]).find((e) => e.workload === workload)!.id!;
    const wa = await stored.experiments.get(idOf('wa'));
    expect(wa?.spec.request).toMatchObject({ controlRevision: base, treatmentRevision: head, change: head });
    // Why it was selected is stored with the experiment, and the dashboard's change page shows it with its path.
    const selected = (await stored.experiments.events(idOf('wb'))).find((e) => e.type === 'selected');
    expect(selected?.data).toMatchObject({
      base,
      head,
      reasons: [expect.objectContaining({ kind: 'graph', file: 'packages/a/index.js', path: ['packages/a/index.js', '@x/a', '@x/b'] })],
    });
    const dashboard = await dashboardOver(stored);
    const changePage = await (await fetch(`${dashboard.url}/changes/${head}`)).text();
    await dashboard.close();
    await stored.close();
    expect(changePage).toContain('packages/a/index.js reaches @x/b through @x/a');
    expect(changePage).toContain('path: packages/a/index.js → @x/a → @x/b');
    // A retry of the same change and stage finds the same experiments.
    const retry = await runCli(['submit', '--base', 'HEAD~1', '--noop', '--json'], { cwd: dir });
    expect((JSON.parse(retry.out) as typeof result).experiments.map((e) => e.workload).sort()).toEqual(result.experiments.map((e) => e.workload).sort());
    const md = await runCli(['submit', '--base', 'HEAD~1', '--noop'], { cwd: dir });
    expect(md.out).toMatch(/^### Tandem experiments/);
    expect(md.out).toMatch(/\| wb \| exp-[0-9a-f]+ \| [^|]+ \| passed \| packages\/a\/index\.js reaches @x\/b through @x\/a \|/);
  });

  it('evaluates the setting-level refinement offline over past config changes (FIRE)', async () => {
    const { dir } = await repo();
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    const now = Date.now();
    // ranking reads model.depth (read again after the changes below); search reads the file as a whole.
    await store.configReads.append([
      { service: 'ranking', file: 'config/ranking.yaml', setting: 'model.depth', timeMs: now + 30_000 },
      { service: 'search', file: 'config/ranking.yaml', setting: '', timeMs: now - 60_000 },
    ]);
    await store.close();
    await commit(dir, { 'config/ranking.yaml': 'model:\n  depth: 3\nlogging:\n  level: debug\n' });
    await commit(dir, { 'config/ranking.yaml': 'model:\n  depth: 5\nlogging:\n  level: debug\n' });
    const result = await runCli(['triggers', 'evaluate', '--since', '1h', '--json'], { cwd: dir });
    expect(result.code, result.err).toBe(0);
    const evaluation = JSON.parse(result.out) as Record<string, number>;
    // The first commit (the file appearing: both settings) and the two edits, times 2 reading services.
    // search stays at file level; the ranking pairs are suppressed (no read of model.depth before them),
    // and model.depth, changed by the first and third commits, was read later: two misses.
    expect(evaluation).toMatchObject({
      configChanges: 3,
      fileLevelSelections: 6,
      settingLevelSelections: 3,
      suppressed: 3,
      fileLevelFallbacks: 3,
      suppressedSettings: 4,
      suppressedSettingsReadLater: 2,
    });
    const text = await runCli(['triggers', 'evaluate', '--since', '1h'], { cwd: dir });
    expect(text.out).toMatch(/suppressed: 3 \(50\.0%\); of their 4 changed setting\(s\), 2 were read later \(50\.0%\)/);
  });

  it('selects the services whose level changed in a lattice state, with those states as candidates', async () => {
    const { dir } = await repo();
    const lattice = (rankingL1: number) =>
      [
        'states:',
        '  - { name: L0, levels: { ranking: 0, search: 0 } }',
        `  - { name: L1, levels: { ranking: ${rankingL1}, search: 0 } }`,
        '  - { name: L2, levels: { ranking: 2, search: 1 } }',
        '',
      ].join('\n');
    await commit(dir, { 'lattices/serving.yaml': lattice(1) });
    await commit(dir, { 'lattices/serving.yaml': lattice(2) });
    const selection = await affected(dir);
    expect(names(selection.selected)).toEqual(['ranking']);
    expect(selection.selected[0]).toMatchObject({
      candidateStates: ['L1'],
      reasons: [{ kind: 'lattice', file: 'lattices/serving.yaml', states: ['L1'], message: "lattice lattices/serving.yaml changed ranking's level in L1" }],
    });
  });

  it('narrows a lockfile change to the packages using a changed dependency, when configured', async () => {
    const lockfile = (lodash: string) =>
      JSON.stringify({ lockfileVersion: 3, packages: { '': {}, 'node_modules/lodash': { version: lodash }, 'node_modules/left-pad': { version: '1.0.0' } } });
    const { dir } = await repo(['  narrowLockfile: true']);
    await commit(dir, { 'package-lock.json': lockfile('4.17.20') });
    await commit(dir, { 'package-lock.json': lockfile('4.17.21') });
    const narrowed = await affected(dir);
    // @x/b depends on lodash; nothing depends on @x/b, and @x/a and @x/c do not use lodash.
    expect(names(narrowed.selected)).toEqual(['wb']);
    expect(narrowed.selected[0]!.reasons[0]).toMatchObject({
      kind: 'graph',
      file: 'package-lock.json',
      packages: ['lodash'],
      path: ['package-lock.json', '@x/b'],
      message: 'package-lock.json (lodash) is in target @x/b',
    });
    const { dir: wide } = await repo(['  narrowLockfile: false']);
    await commit(wide, { 'package-lock.json': lockfile('4.17.20') });
    await commit(wide, { 'package-lock.json': lockfile('4.17.21') });
    expect((await affected(wide)).selected.find((s) => s.workload === 'wa')!.reasons.map((r) => r.message)).toContain('global input package-lock.json changed');
  });

  it('prints names from repository content escaped: a lockfile package named with terminal escapes cannot set a title or clear a screen', async () => {
    const evil = 'left-pad\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202e';
    const lockfile = (version: string) => JSON.stringify({ lockfileVersion: 3, packages: { '': {}, [`node_modules/${evil}`]: { version } } });
    const { dir } = await repo(['  narrowLockfile: true']);
    await commit(dir, {
      'packages/b/package.json': JSON.stringify({ name: '@x/b', dependencies: { '@x/a': '*', [evil]: '^1' } }),
      'package-lock.json': lockfile('1.0.0'),
    });
    await commit(dir, { 'package-lock.json': lockfile('1.0.1') });
    const human = await runCli(['affected', '--base', 'HEAD~1', '--head', 'HEAD'], { cwd: dir });
    expect(human.code, human.err).toBe(0);
    // eslint-disable-next-line no-control-regex -- the point: no control character reaches the terminal
    expect(human.out + human.err).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(human.out).toContain('left-pad\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202e');
    // JSON stays JSON, and means the same name.
    const json = await runCli(['affected', '--base', 'HEAD~1', '--head', 'HEAD', '--json'], { cwd: dir });
    const selection = JSON.parse(json.out) as Selection;
    expect(selection.selected.find((s) => s.workload === 'wb')!.reasons[0]).toMatchObject({ packages: [evil] });
  });

  it("expands templates over the repository --repo names, run from anywhere (issue 32: it read the current directory's HEAD)", async () => {
    const { dir } = await repo(['workloadTemplates:', '  - { targets: ["@x/*"], workload: { name: "{slug}", tier: "{name}" } }']);
    await commit(dir, { 'packages/a/index.js': 'export const a = 2;\n' });
    const elsewhere = await mkdtemp(join(tmpdir(), 'tandem-elsewhere-'));
    onTestFinished(() => rm(elsewhere, { recursive: true, force: true }));
    const result = await runCli(['affected', '--config', join(dir, 'tandem.config.yaml'), '--repo', dir, '--base', 'HEAD~1', '--head', 'HEAD', '--json'], {
      cwd: elsewhere,
    });
    expect(result.code, result.err).toBe(0);
    // {slug}: the scoped target name as a workload name.
    expect(names((JSON.parse(result.out) as Selection).selected)).toEqual(['wa', 'wb', 'x-a', 'x-b']);
  });

  it('warns, in affected and validate, about build targets no template and no workload covers (`*` stops at `/`)', async () => {
    const { dir } = await repo(['workloadTemplates:', '  - { targets: ["*"], workload: { name: "t-{name}", tier: "{name}" } }']);
    await writeFile(
      join(dir, 'tandem.config.yaml'),
      (await readFile(join(dir, 'tandem.config.yaml'), 'utf8')).replace(
        '  - { name: wc, tier: c, triggers: { targets: ["@x/c"], priority: low, sampleProbability: 0.5 } }\n',
        '',
      ),
    );
    await commit(dir, { 'packages/c/index.js': 'export const c = 2;\n' });
    const affectedRun = await runCli(['affected', '--base', 'HEAD~1', '--head', 'HEAD'], { cwd: dir });
    expect(affectedRun.code, affectedRun.err).toBe(0);
    expect(affectedRun.err).toContain(
      'warning: 1 of 3 build targets match no workload template and no workload: @x/c (a glob\'s `*` stops at `/`: "@*/*" or "**" matches scoped names)',
    );
    const validated = await runCli(['validate'], { cwd: dir });
    expect(validated.code, validated.err).toBe(0);
    expect(validated.err).toContain('warning: 1 of 3 build targets');
  });

  it('validates workloads against the build graph as affected does: an unknown target is exit 3 in both', async () => {
    const { dir } = await repo(['  # ', '']);
    await writeFile(
      join(dir, 'tandem.config.yaml'),
      (await readFile(join(dir, 'tandem.config.yaml'), 'utf8')).replace('targets: ["@x/c"]', 'targets: ["@x/nope"]'),
    );
    await commit(dir, { 'docs/guide.md': '# guide 2\n' });
    const validated = await runCli(['validate'], { cwd: dir });
    expect(validated.code).toBe(3);
    expect(validated.err).toContain('"@x/nope" is not a target of the build graph');
    const affectedRun = await runCli(['affected', '--base', 'HEAD~1', '--head', 'HEAD'], { cwd: dir });
    expect(affectedRun.code).toBe(3);
  });

  it('refuses a workspace manifest that does not parse at either end: exit 3 naming the file and the revision (issue 32)', async () => {
    const { dir } = await repo();
    await commit(dir, { 'packages/b/package.json': '{"name": "@x/b", "dependencies": {' });
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
    const result = await runCli(['affected', '--base', 'HEAD~1', '--head', 'HEAD'], { cwd: dir });
    expect(result.code).toBe(3);
    expect(result.err).toMatch(/packages\/b\/package\.json at (HEAD|[0-9a-f]{7,40}): not valid JSON/);
    expect(result.err.includes(head.slice(0, 7)) || result.err.includes('at HEAD')).toBe(true);
  });

  it('samples low-priority workloads by (change, workload): the same change always decides the same way', async () => {
    const { dir } = await repo();
    const decisions: string[] = [];
    for (let i = 0; i < 8; i++) {
      await commit(dir, { 'packages/c/index.js': `export const c = ${i + 2};\n` });
      const first = await affected(dir);
      const retry = await affected(dir);
      expect(names(retry.selected)).toEqual(names(first.selected));
      decisions.push(first.deferred.some((d) => d.workload === 'wc') ? 'deferred' : 'selected');
      if (first.deferred.length > 0)
        expect(first.deferred[0]!.reason).toMatchObject({
          kind: 'deferred',
          probability: 0.5,
          message: expect.stringMatching(/low priority: sampled out at diff time/),
        });
      else expect(first.selected.find((w) => w.workload === 'wc')!.reasons.at(-1)).toMatchObject({ kind: 'sampled', probability: 0.5 });
    }
    expect(decisions).toHaveLength(8);
  });
});
