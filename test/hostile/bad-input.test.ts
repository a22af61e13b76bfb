/**
 * Bad input gets exit 3 and a message that names it (issue 18). Each case
 * below was an "unexpected error", a stack trace, a hang or a silent wrong
 * value on the landed code.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { MAX_TIMER_MS, parseConfig, parseConfigText, parseDuration, systemClock, type LatticeConfig } from '../../core/index.js';
import { LoadFactors, LatticeController, startControllerServer } from '../../lattice/index.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { tempDir } from '../support/temp-dir.js';
import { loadGraphAtBothEnds, selectWorkloads } from '../../triggers/index.js';
import { gitRepo } from '../support/git-repo.js';

const LATTICE_YAML = [
  'lattices:',
  '  - name: serving',
  '    services: { ranking: { maxLevel: 5 }, prediction: { maxLevel: 3 } }',
  '    decisionPeriod: 10s',
  '    states:',
  '      - { name: L0, threshold: 0, levels: { ranking: 0, prediction: 0 } }',
  '      - { name: L1, threshold: 0.8, levels: { ranking: 1, prediction: 0 } }',
  '',
].join('\n');

describe('durations', () => {
  it('400-digit, 0.0001ms and longer-than-ten-years durations are refused, never 0 or overflowed', () => {
    expect(parseDuration(`${'9'.repeat(400)}s`)).toBeUndefined();
    expect(parseDuration('0.0001ms')).toBeUndefined();
    expect(parseDuration('3651d')).toBeUndefined();
    expect(parseDuration('30d')).toBe(30 * 86_400_000);
    expect(() => parseConfigText(LATTICE_YAML.replace('decisionPeriod: 10s', `decisionPeriod: ${'1'.repeat(400)}s`), 'l.yaml')).toThrow(
      /decisionPeriod must be between 1ms and 3650d/,
    );
  });

  it('every duration something waits for is capped at what a timer holds, with the limit in the message (issue 32: reset.timeout 30d killed the reset at once)', async () => {
    const workload = (reset: string) =>
      [
        'workloads:',
        '  - name: w',
        '    tier: t',
        '    arms:',
        `      control: { url: "http://127.0.0.1:1", reset: { command: "true", timeout: ${reset} } }`,
        '      treatment: { url: "http://127.0.0.1:2" }',
        '',
      ].join('\n');
    expect(() => parseConfigText(workload('30d'), 'c.yaml')).toThrow(/reset\.timeout must be at most about 24\.8 days \(2147483647ms/);
    expect(parseConfigText(workload('24d'), 'c.yaml').workloads[0]!.arms!.control.reset!.timeout).toBe(24 * 86_400_000);
    const field = (yaml: string) => () =>
      parseConfigText(['workloads:', '  - name: w', '    tier: t', ...yaml.split('\n').map((l) => `    ${l}`), ''].join('\n'), 'c.yaml');
    expect(field('replay: { timeout: 25d }')).toThrow(/replay\.timeout must be at most about 24\.8 days/);
    expect(field('trials: { measure: 40d }')).toThrow(/trials\.measure must be at most/);
    // A window compared with timestamps is never waited for: it may be longer.
    expect(field('corpus: { lookback: 90d }')().workloads[0]!.corpus.lookback).toBe(90 * 86_400_000);
    expect(() => parseConfigText(LATTICE_YAML.replace('decisionPeriod: 10s', 'decisionPeriod: 30d'), 'l.yaml')).toThrow(
      /decisionPeriod must be at most about 24\.8 days/,
    );
    const dir = await tempDir();
    await writeFile(join(dir, 'tandem.config.yaml'), workload('1s'));
    const wait = await runCli(['wait', 'x', '--timeout', '30d'], { cwd: dir });
    expect(wait.code).toBe(3);
    expect(wait.err).toContain('--timeout must be at most about 24.8 days');
  });

  it('a config over 1 MiB is refused before it is parsed, naming its size and the limit (issue 32: 50 MB took 108 s and 3.3 GB)', async () => {
    const dir = await tempDir();
    const huge = `workloads:\n${'  - { name: w, tier: t }\n'.repeat(60_000)}`;
    await writeFile(join(dir, 'tandem.config.yaml'), huge);
    const result = await runCli(['validate'], { cwd: dir });
    expect(result.code).toBe(3);
    expect(result.err).toMatch(/the config is 1\.\d MiB; a Tandem config is at most 1 MiB/);
    expect(() => parseConfigText(huge, 'c.yaml')).toThrow(/at most 1 MiB/);
  });

  it('a sleep longer than Node’s longest timer waits the whole time', async () => {
    vi.useFakeTimers();
    try {
      let woke = false;
      void systemClock.sleep(30 * 86_400_000).then(() => (woke = true));
      await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + 10);
      expect(woke).toBe(false);
      await vi.advanceTimersByTimeAsync(30 * 86_400_000 - MAX_TIMER_MS);
      expect(woke).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('run --every 0s and --budget 0s are bad input', async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, 'tandem.config.yaml'),
      'workloads: [{ name: w, tier: t, arms: { control: { url: "http://127.0.0.1:9" }, treatment: { url: "http://127.0.0.1:9" } } }]\n',
    );
    for (const args of [
      ['--every', '0s'],
      ['--budget', '0s'],
    ]) {
      const result = await runCli(['run', 'w', ...args], { cwd: dir });
      expect(result.code).toBe(3);
      expect(result.err).toContain(`${args[0]} must be longer than 0`);
    }
  });
});

describe('config files', () => {
  it('a YAML alias bomb is a config error naming the file', async () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      ...Array.from(
        { length: 8 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`,
      ),
    ].join('\n');
    expect(() => parseConfigText(bomb, '/x/tandem.config.yaml')).toThrow(/invalid \/x\/tandem\.config\.yaml:\n {2}- the YAML expands too many aliases/);
    const dir = await tempDir();
    await writeFile(join(dir, 'tandem.config.yaml'), bomb);
    const result = await runCli(['validate'], { cwd: dir });
    expect(result.code).toBe(3);
    expect(result.err).toContain('tandem.config.yaml');
    expect(result.err).not.toContain('unexpected error');
  });

  it('nesting deeper than a stack is a config error, not "Maximum call stack size exceeded"', () => {
    const deep = `workloads: ${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect(() => parseConfigText(deep, 'deep.yaml')).toThrow(/invalid deep\.yaml:\n {2}- (line \d+:\d+: )?the (YAML|config) is nested too deeply/);
  });

  it('a dependency-health detector without rule.metric fails validation', () => {
    expect(() =>
      parseConfig({ workloads: [{ name: 'w', tier: 't', detectors: [{ name: 'd', kind: 'dependency-health', source: 'http://127.0.0.1:9/metrics' }] }] }),
    ).toThrow(/workloads\[0\]\.detectors\[0\]\.rule\.metric a dependency-health detector needs rule\.metric/);
  });
});

describe('stores and ports', () => {
  it('a corrupt experiment record names its file', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, '.tandem', 'experiments'), { recursive: true });
    await writeFile(join(dir, '.tandem', 'experiments', 'exp-1.json'), '{"id": "exp-1", "work');
    await writeFile(join(dir, 'tandem.config.yaml'), 'workloads: []\n');
    const result = await runCli(['status', 'exp-1'], { cwd: dir });
    expect(result.code).toBe(3);
    expect(result.err).toMatch(/experiment record .*exp-1\.json is corrupt/);
  });

  it.each([
    ['ingest', []],
    ['lattice', ['serve', '--lattice', 'serving']],
    ['serve', []],
  ])('a busy port for %s is bad input naming the address', async (command, extra) => {
    const busy = createServer().listen(0, '127.0.0.1');
    await once(busy, 'listening');
    onTestFinished(() => void busy.close());
    const port = (busy.address() as AddressInfo).port;
    const dir = await tempDir();
    await writeFile(join(dir, 'tandem.config.yaml'), LATTICE_YAML);
    const result = await runCli([command, ...extra, '--listen', `127.0.0.1:${port}`], { cwd: dir });
    expect(result.code).toBe(3);
    expect(result.err).toContain(`cannot listen on 127.0.0.1:${port}`);
    expect(result.err).toContain('the address is in use');
  });

  it('tandem serve refuses a token variable that is unset, too short or not a name, and a malformed --listen, naming each', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'tandem.config.yaml'), LATTICE_YAML);
    const cases: [string[], NodeJS.ProcessEnv, string][] = [
      [['--token-env', 'TANDEM_NOT_SET_ANYWHERE'], {}, '--token-env names TANDEM_NOT_SET_ANYWHERE, which is not set'],
      [['--token-env', 'SHORT_TOKEN'], { SHORT_TOKEN: 'abc' }, 'must be at least 16 characters'],
      [['--token-env', '$(touch pwned)'], {}, '--token-env must name an environment variable'],
      [['--listen', 'localhost:99999'], {}, '--listen must be [HOST]:PORT'],
    ];
    for (const [args, env, message] of cases) {
      const result = await runCli(['serve', ...args], { cwd: dir, env: { ...process.env, ...env } });
      expect(result.code, args.join(' ')).toBe(3);
      expect(result.err).toContain(message);
    }
  });

  it('tandem record refuses a half TLS identity and a file that is not PEM, and validate a descriptor set that does not parse, naming each', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'not-pem.txt'), 'hello');
    await writeFile(join(dir, 'broken.binpb'), 'not a descriptor set');
    await writeFile(
      join(dir, 'tandem.config.yaml'),
      ['workloads:', '  - name: w', '    tier: t', '    harness: { responses: { grpc: { descriptorSet: broken.binpb } } }', ''].join('\n'),
    );
    const record = ['record', '--tier', 'q', '--listen', '127.0.0.1:0', '--upstream', 'http://127.0.0.1:9'];
    const cases: [string[], string][] = [
      [[...record, '--tls-cert', 'not-pem.txt'], 'give both --tls-cert and --tls-key, or neither'],
      [[...record, '--tls-cert', 'not-pem.txt', '--tls-key', 'not-pem.txt'], '--tls-cert not-pem.txt: not a PEM file'],
      [[...record, '--tls-cert', 'missing.pem', '--tls-key', 'not-pem.txt'], '--tls-cert missing.pem: ENOENT'],
      [['validate'], 'workloads[0].harness.responses.grpc.descriptorSet: '],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args, { cwd: dir });
      expect(result.code, args.join(' ')).toBe(3);
      expect(result.err).toContain(message);
    }
  });

  it('tandem record on a busy port exits 3 instead of hanging', async () => {
    const busy = createServer().listen(0, '127.0.0.1');
    await once(busy, 'listening');
    onTestFinished(() => void busy.close());
    const port = (busy.address() as AddressInfo).port;
    const dir = await tempDir();
    const child = spawn(
      process.execPath,
      [join(REPO_ROOT, 'bin', 'tandem.js'), 'record', '--tier', 'q', '--listen', `127.0.0.1:${port}`, '--upstream', 'http://127.0.0.1:9'],
      { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(3);
    expect(err).toContain('the address is in use');
  }, 60_000);
});

describe('workspaces', () => {
  it('a malformed workspace package.json, and a workload naming a missing target, are bad input naming them', async () => {
    const repo = await gitRepo();
    const load = (): ReturnType<typeof loadGraphAtBothEnds> => loadGraphAtBothEnds({ kind: 'workspaces' }, repo.dir, 'HEAD', 'HEAD');
    await repo.commit({
      'package.json': JSON.stringify({ name: 'root', workspaces: ['packages/*'] }),
      'packages/a/package.json': JSON.stringify({ name: 'a' }),
      'packages/b/package.json': '{"name": "b",',
    });
    await expect(load()).rejects.toThrow(/packages\/b\/package\.json at HEAD: not valid JSON/);
    await repo.commit({ 'packages/b/package.json': JSON.stringify({ version: '1.0.0' }) });
    await expect(load()).rejects.toThrow(/packages\/b\/package\.json at HEAD: a workspace package needs a "name"/);
    await repo.commit({ 'packages/b/package.json': JSON.stringify({ name: 'b' }) });
    const { graph } = await load();
    const config = parseConfig({ workloads: [{ name: 'w', tier: 't', triggers: { targets: ['a', 'nope'] } }] });
    expect(() => selectWorkloads({ config, change: 'C', changedFiles: ['packages/a/x.ts'], graph })).toThrow(
      /workloads\[0\] \(w\)\.triggers\.targets: "nope" is not a target of the build graph/,
    );
    await repo.commit({ 'package.json': '{"workspaces": [' });
    await expect(load()).rejects.toThrow(/^invalid build graph:\n  - package\.json at HEAD: not valid JSON/);
  });
});

describe('the lattice controller', () => {
  const lattice = (): LatticeConfig => parseConfigText(LATTICE_YAML, 'l.yaml').lattices[0]!;

  it('refuses service names that are not its own: constructor, __proto__, toString', () => {
    const factors = new LoadFactors(lattice(), systemClock);
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) expect(() => factors.report(name, 9)).toThrow(/is not in lattice serving/);
    expect(factors.perService().size).toBe(0);
  });

  it('a batch with one bad report applies none of it', async () => {
    const l = lattice();
    const loadFactors = new LoadFactors(l, systemClock);
    const controller = new LatticeController({ lattice: l, loadFactors, clock: systemClock, onDecision: async () => undefined });
    const server = await startControllerServer({
      lattice: l,
      controller,
      loadFactors,
      host: '127.0.0.1',
      port: 0,
      token: undefined,
      recentDecisions: () => [],
    });
    onTestFinished(() => server.close());
    const reply = await fetch(`${server.url}/load-factor`, {
      method: 'POST',
      body: JSON.stringify([
        { service: 'ranking', value: 0.9 },
        { service: 'constructor', value: 9 },
      ]),
    });
    expect(reply.status).toBe(400);
    expect(await reply.json()).toEqual({ error: 'report 1: service "constructor" is not in lattice serving; no report of this batch was applied' });
    expect(loadFactors.perService().size).toBe(0);
  });
});

describe('closed pipes', () => {
  it('tandem --help into a closed pipe ends quietly, not with an EPIPE stack trace and exit 1', async () => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'tandem.js'), 'schema', '--markdown'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    // Close our end as `head -c 1` would, after the first bytes.
    child.stdout.once('data', () => child.stdout.destroy());
    const [code] = (await once(child, 'exit')) as [number];
    expect(err).not.toContain('EPIPE');
    expect(code).toBe(0);
  }, 60_000);
});
