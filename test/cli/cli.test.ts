import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { tempDir } from '../support/temp-dir.js';
import { describe, expect, inject, it } from 'vitest';
import { REPO_ROOT, runCli, spawnCli } from '../support/cli.js';
import { freePort } from '../support/free-port.js';

describe('tandem validate', () => {
  it('accepts a valid config', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'tandem.config.yaml'), 'workloads:\n  - name: w\n    tier: t\n');
    const result = await runCli(['validate'], { cwd: dir });
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toContain('valid (1 workload, store local, queue inline)');
  });

  it('prints every problem with its path and exits 3', async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, 'bad.yaml'),
      'workloads:\n  - name: w\n    tier: t\n    detectors:\n      - { name: d, kind: dependency-health, source: "http://127.0.0.1:1", consecutive: 0 }\nrecorder: { rate: 2 }\n',
    );
    const result = await runCli(['validate', '--config', 'bad.yaml'], { cwd: dir });
    expect(result.code).toBe(3);
    expect(result.err).toContain('workloads[0].detectors[0].consecutive must be >= 1, got 0 (line 5:');
    expect(result.err).toContain('recorder.rate must be <= 1, got 2 (line 6:');
  });

  it('gives machine-readable issues with --json', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'tandem.config.json'), JSON.stringify({ workloads: [{ name: 'w', tier: 't', replay: { rate: -1 } }] }));
    const result = await runCli(['validate', '--json'], { cwd: dir });
    expect(result.code).toBe(3);
    expect(JSON.parse(result.out)).toMatchObject({ valid: false, issues: [expect.stringContaining('workloads[0].replay.rate must be > 0, got -1')] });
  });

  it('warns of a design that can never decide (the finding: count 3 with deployed arms validated, ran and ended "no verdict")', async () => {
    const dir = await tempDir();
    const arm = '{ deploy: { command: "node server.js --port {port}" } }';
    await writeFile(
      join(dir, 'tandem.config.yaml'),
      `workloads:\n  - name: w\n    tier: t\n    arms: { control: ${arm}, treatment: ${arm} }\n    trials: { count: 3 }\n  - name: ok\n    tier: t\n`,
    );
    const result = await runCli(['validate'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.err).toContain(
      'warning: workloads[0].trials: at most 3 trial(s) can never decide: with deployed arms the slot bias is fitted, and no look of fewer than 6 trials can at α = 0.05',
    );
    expect(result.err).not.toContain('workloads[1]');
    const json = JSON.parse((await runCli(['validate', '--json'], { cwd: dir })).out) as { warnings: string[] };
    expect(json.warnings).toHaveLength(1);
  });

  it('says where it looked when there is no config file', async () => {
    const dir = await tempDir();
    const result = await runCli(['validate'], { cwd: dir });
    expect(result.code).toBe(3);
    expect(result.err).toContain(`no config file found: looked for tandem.config.yaml, tandem.config.yml, tandem.config.json in ${dir}`);
  });
});

describe('tandem CLI', () => {
  it('refuses to select or run workloads without a config file: exit 3 naming it, nothing created', async () => {
    const dir = await tempDir();
    // A repository with a change in it, as in CI: only the missing config may stop the commands.
    for (const args of [
      ['init', '-q'],
      ['-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'a'],
      ['-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'b'],
    ]) {
      execFileSync('git', args, { cwd: dir });
    }
    const cases: [string[], number][] = [
      [['submit', '--base', 'HEAD~1', '--head', 'HEAD'], 3],
      [['affected', '--base', 'HEAD~1'], 3],
      [['run', 'w'], 3],
      [['calibrate', '--workload', 'w'], 3],
      // Under `git bisect run`, any error is 128: it stops the bisection instead of marking a revision.
      [['bisect-step', '--workload', 'w', '--good', 'HEAD'], 128],
    ];
    for (const [args, code] of cases) {
      const result = await runCli(args, { cwd: dir });
      expect(result.code, args.join(' ')).toBe(code);
      expect(result.err, args.join(' ')).toContain('no config file found: looked for tandem.config.yaml');
      expect(result.out, args.join(' ')).not.toContain('workload(s) selected');
    }
    await expect(stat(join(dir, '.tandem'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('validates the config before any command runs', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'tandem.config.yaml'), 'store: { kind: local, dri: x }\n');
    for (const args of [
      ['store', 'init'],
      ['replay', '--workload', 'w'],
    ]) {
      const result = await runCli(args, { cwd: dir });
      expect(result.code).toBe(3);
      expect(result.err).toContain('unknown key "dri" in store (did you mean "dir"?)');
    }
  });

  it('refuses demo backends it does not know, backend URLs without their backend, a --dir it cannot create, a --rate that is not a whole number from 1 to 100 and an --only that is not a list of steps, with exit 3', async () => {
    const dir = await tempDir();
    const cases: [string[], RegExp][] = [
      [['demo', '--store', 'mongo'], /--store must be local or clickhouse, got "mongo"/],
      [['demo', '--queue', 'kafka'], /--queue must be inline or bullmq, got "kafka"/],
      [['demo', '--redis-url', 'redis://127.0.0.1:6379'], /--redis-url needs --queue bullmq/],
      [['demo', '--store', 'clickhouse', '--clickhouse-url', 'ftp://x'], /--clickhouse-url must be an http:\/\/ URL/],
      [['demo', '--dir', 'tandem.config.yaml/demo'], /--dir: cannot create .*tandem\.config\.yaml\/demo: ENOTDIR/],
      [['demo', '--rate', '7.5'], /--rate must be a whole number >= 1, got "7\.5"/],
      [['demo', '--rate', '0'], /--rate must be a whole number >= 1, got "0"/],
      [['demo', '--rate', '1e3'], /--rate must be at most 100 pairs\/s .*got 1000/],
      [['demo', '--rate', '$(id)'], /--rate must be a whole number >= 1, got "\$\(id\)"/],
      [['demo', '--only', '0'], /--only must list steps from 1 to 5, each once, separated by commas \(e\.g\. 1,3,5\), got "0"/],
      [['demo', '--only', '6'], /--only must list steps from 1 to 5.*got "6"/],
      [['demo', '--only', '1,1'], /--only must list steps from 1 to 5, each once.*got "1,1"/],
      [['demo', '--only', '1,,3'], /--only must list steps.*got "1,,3"/],
      [['demo', '--only', '1;id'], /--only must list steps.*got "1;id"/],
    ];
    await writeFile(join(dir, 'tandem.config.yaml'), 'workloads: []\n');
    for (const [args, message] of cases) {
      const result = await runCli(args, { cwd: dir });
      expect(result.code, args.join(' ')).toBe(3);
      expect(result.err, args.join(' ')).toMatch(message);
    }
  });

  it('treats unknown commands and options as bad input (exit 3)', async () => {
    const dir = await tempDir();
    expect((await runCli(['nosuch'], { cwd: dir })).code).toBe(3);
    expect((await runCli(['validate', '--bogus'], { cwd: dir })).code).toBe(3);
    expect((await runCli([], { cwd: dir })).code).toBe(3);
  });

  it('initializes a local store idempotently', async () => {
    const dir = await tempDir();
    for (let i = 0; i < 2; i++) {
      const result = await runCli(['store', 'init', '--json'], { cwd: dir });
      expect(result.code).toBe(0);
      expect(JSON.parse(result.out)).toEqual({ initialized: true, kind: 'local', location: join(dir, '.tandem') });
    }
    expect((await stat(join(dir, '.tandem', 'corpus'))).isDirectory()).toBe(true);
  });

  it('initializes a ClickHouse store from the config', async () => {
    const dir = await tempDir();
    const database = `tandem_cli_${randomUUID().replaceAll('-', '')}`;
    await writeFile(join(dir, 'tandem.config.yaml'), `store: { kind: clickhouse, url: "${inject('clickhouseUrl')}", database: ${database} }\n`);
    const result = await runCli(['store', 'init'], { cwd: dir });
    expect(result).toMatchObject({ code: 0, err: '' });
    const tables = await (await fetch(`${inject('clickhouseUrl')}/?query=${encodeURIComponent(`SHOW TABLES FROM ${database}`)}`)).text();
    expect(tables.trim().split('\n').sort()).toEqual([
      'config_reads',
      'corpus',
      'corpus_tiers',
      'corpus_tiers_mv',
      'error_records',
      'experiment_events',
      'experiments',
      'observations',
      'outcomes',
      'samples',
    ]);
  });

  it('reports an unreachable ClickHouse in one line without a stack trace, exit 2', async () => {
    const dir = await tempDir();
    const url = `http://127.0.0.1:${await freePort()}`;
    await writeFile(join(dir, 'tandem.config.yaml'), `store: { kind: clickhouse, url: "${url}", requestTimeout: 2s }\n`);
    const result = await runCli(['store', 'init'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.err).toContain(`tandem: cannot reach ClickHouse at ${url}`);
    expect(result.err).not.toMatch(/\n\s+at /);
    const verbose = await runCli(['store', 'init', '--verbose'], { cwd: dir });
    expect(verbose.err).toMatch(/\n\s+at /);
  });

  it('reports an unwritable local store dir clearly, exit 2', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'blocker'), '');
    await writeFile(join(dir, 'tandem.config.yaml'), 'store: { kind: local, dir: blocker/.tandem }\n');
    const result = await runCli(['store', 'init'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.err).toContain(`local store at ${join(dir, 'blocker', '.tandem')}: cannot create`);
    expect(result.err).toContain('hint:');
  });

  it('keeps docs/config.md and docs/config.schema.json in step with the schema', async () => {
    const markdown = await runCli(['schema', '--markdown'], { cwd: REPO_ROOT });
    expect(await readFile(join(REPO_ROOT, 'docs', 'config.md'), 'utf8')).toBe(markdown.out);
    const json = await runCli(['schema'], { cwd: REPO_ROOT });
    expect(await readFile(join(REPO_ROOT, 'docs', 'config.schema.json'), 'utf8')).toBe(json.out);
  });

  it("validates the repository's own example config", async () => {
    const result = await runCli(['validate'], { cwd: REPO_ROOT });
    expect(result.code).toBe(0);
  });
});

describe('tandem as a user runs it (spawned)', () => {
  it('--help lists the commands and exit codes', async () => {
    const result = await spawnCli(['--help'], { cwd: await tempDir() });
    expect(result.code).toBe(0);
    for (const command of ['validate', 'schema', 'store', 'replay', 'run', 'worker', 'demo']) expect(result.out).toMatch(new RegExp(`\\n  ${command}\\b`));
    expect(result.out).toContain('Exit codes: 0 ok, 1');
  });

  it('validate, schema and store init work end to end', async () => {
    const dir = await tempDir();
    expect((await spawnCli(['validate'], { cwd: dir })).code).toBe(3);
    await writeFile(join(dir, 'tandem.config.yaml'), 'workloads: []\n');
    expect(await spawnCli(['validate'], { cwd: dir })).toMatchObject({ code: 0 });
    const schema = await spawnCli(['schema'], { cwd: dir });
    expect(JSON.parse(schema.out)).toMatchObject({ type: 'object', additionalProperties: false });
    expect(await spawnCli(['store', 'init'], { cwd: dir })).toMatchObject({ code: 0, out: `initialized local store at ${join(dir, '.tandem')}\n` });
    expect(await spawnCli(['demo', '--queue', 'kafka'], { cwd: dir })).toMatchObject({ code: 3 });
  });
});
