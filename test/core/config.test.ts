import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ConfigError, configJsonSchema, loadConfig, parseConfig, parseConfigText } from '../../core/index.js';

function issuesOf(action: () => unknown): string[] {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe('TANDEM_ERR_CONFIG');
    return [...(error as ConfigError).issues];
  }
  throw new Error('expected a ConfigError');
}

const minimal = { workloads: [{ name: 'ranking', tier: 'ranking' }] };

describe('config validation', () => {
  it('fills defaults and turns durations into milliseconds', () => {
    const config = parseConfig(minimal);
    expect(config.store).toEqual({ kind: 'local', dir: '.tandem' });
    expect(config.queue).toEqual({ kind: 'inline', concurrency: 1 });
    expect(config.recorder.rate).toBe(1e-4);
    const [w] = config.workloads;
    expect(w?.corpus.lookback).toBe(4 * 3_600_000);
    // Sequential by default: a look after every trial from the 4th, at most 12 (`count` is the most a run takes).
    expect(w?.trials).toEqual({
      min: 4,
      max: 30,
      count: 30,
      budget: 900_000,
      warmup: 3_000,
      measure: 10_000,
      maxReplacements: 2,
      allowFingerprintMismatch: false,
      processes: 1,
      prestart: false,
      prewarm: 20,
    });
    expect(w?.replay.timeout).toBe(5_000);
  });

  it('takes gRPC methods recorded without responses by their full name or a whole service, and names a bad one', () => {
    expect(
      parseConfig({ ...minimal, recorder: { grpc: { withoutResponses: ['auth.Tokens/Issue', 'billing.Cards/*'] } } }).recorder.grpc.withoutResponses,
    ).toEqual(['auth.Tokens/Issue', 'billing.Cards/*']);
    for (const bad of ['Issue', '/auth.Tokens/Issue', 'auth.Tokens/*x', 'auth.Tokens/Is sue']) {
      const issues = issuesOf(() => parseConfig({ ...minimal, recorder: { grpc: { withoutResponses: [bad] } } }));
      expect(issues.join('\n'), bad).toMatch(/recorder\.grpc\.withoutResponses\[0\].*package\.Service\/Method/);
    }
  });

  it("takes the transport limits with grpc-go's header list by default, and names a limit out of range", () => {
    expect(parseConfig(minimal).transport).toEqual({
      http2: { maxHeaderListBytes: 16 << 20, maxConcurrentStreams: 1_000, resetBurst: 100, resetsPerSecond: 10 },
      bodyBudgetBytes: 256 << 20,
    });
    expect(parseConfig({ ...minimal, transport: { http2: { maxHeaderListBytes: 1 << 20 } } }).transport.http2).toMatchObject({
      maxHeaderListBytes: 1 << 20,
      maxConcurrentStreams: 1_000,
    });
    const bad: [unknown, RegExp][] = [
      [{ http2: { maxHeaderListBytes: 100 } }, /transport\.http2\.maxHeaderListBytes/],
      [{ http2: { maxConcurrentStreams: 0 } }, /transport\.http2\.maxConcurrentStreams/],
      [{ http2: { resetsPerSecond: -1 } }, /transport\.http2\.resetsPerSecond/],
      [{ http2: { resetBurst: 1.5 } }, /transport\.http2\.resetBurst/],
      [{ bodyBudgetBytes: 10 }, /transport\.bodyBudgetBytes/],
      [{ http2: { maxStreams: 5 } }, /"maxStreams" in transport\.http2/],
    ];
    for (const [transport, path] of bad) expect(issuesOf(() => parseConfig({ ...minimal, transport })).join('\n'), JSON.stringify(transport)).toMatch(path);
  });

  it('takes dependency targets as origins only, naming a target with a path (the router forwards each call with its own)', () => {
    const withDependency = (dependency: unknown) => ({ workloads: [{ name: 'ranking', tier: 'ranking', dependencies: [dependency] }] });
    expect(
      parseConfig(withDependency({ name: 'p', policy: 'pinned', shards: ['http://127.0.0.1:9001', 'http://127.0.0.1:9002/'], pin: 1 })).workloads[0]!
        .dependencies,
    ).toHaveLength(1);
    const issues = issuesOf(() =>
      parseConfig(withDependency({ name: 'p', policy: 'pinned', shards: ['http://127.0.0.1:9001', 'http://127.0.0.1:9001/b'], pin: 1 })),
    );
    expect(issues.join('\n')).toMatch(/workloads\[0\]\.dependencies\[0\]\.shards\[1\].*must be an origin/);
    for (const target of ['http://127.0.0.1:9001/api', 'http://127.0.0.1:9001/?x=1', 'http://user:pw@127.0.0.1:9001']) {
      expect(issuesOf(() => parseConfig(withDependency({ name: 's', policy: 'shared', target }))).join('\n'), target).toMatch(/target.*must be an origin/);
    }
  });

  it('returns a deeply frozen config', () => {
    const config = parseConfig(minimal);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.workloads[0]?.trials)).toBe(true);
  });

  it('reports one line per problem, each naming the path, the value and what was expected', () => {
    const issues = issuesOf(() =>
      parseConfig({
        recorder: { rate: 2 },
        workloads: [
          {
            name: 'ranking',
            tier: 'ranking',
            replay: { qps: 10, concurrency: 'many' },
            trials: { warmup: '-5s', measure: 30 },
            detectors: [{ name: 'restarts', kind: 'dependency-health', source: 'http://127.0.0.1:1/metrics', consecutive: 0 }],
          },
          { name: 'ranking', tier: 'query' },
        ],
      }),
    );
    expect(issues).toEqual(
      expect.arrayContaining([
        'recorder.rate must be <= 1, got 2',
        'unknown key "qps" in workloads[0].replay (did you mean "rate"?)',
        'workloads[0].replay.concurrency must be a number, got "many"',
        expect.stringMatching(/^workloads\[0\]\.trials\.warmup must be a duration like .*got "-5s"$/),
        // A bare number: which unit it lacks.
        'workloads[0].trials.measure must be a duration string with a unit, like "30s" or "30ms", got 30',
        'workloads[0].detectors[0].consecutive must be >= 1, got 0',
        'workloads[0].detectors[0].rule.metric a dependency-health detector needs rule.metric (the Prometheus metric it watches)',
        'workloads[1].name must be unique, got "ranking" (also used by workloads[0])',
      ]),
    );
    expect(issues).toHaveLength(8);
  });

  it('checks URLs, policies, pins and names', () => {
    const issues = issuesOf(() =>
      parseConfig({
        store: { kind: 'clickhouse', url: 'ftp://example' },
        workloads: [
          {
            name: '../evil',
            tier: 'ranking',
            dependencies: [
              { name: 'prediction', policy: 'pinned', shards: ['http://127.0.0.1:1', 'http://127.0.0.1:2'], pin: 3 },
              { name: 'features', policy: 'mirrored', target: 'http://127.0.0.1:3' },
              { name: 'features', policy: 'isolated', target: 'not a url' },
            ],
          },
        ],
      }),
    );
    expect(issues).toEqual(
      expect.arrayContaining([
        'store.url must be an http:// or https:// URL, got "ftp://example"',
        expect.stringMatching(/^workloads\[0\]\.name must be a name of letters/),
        'workloads[0].dependencies[0].pin must be <= the number of shards (2), got 3',
        'workloads[0].dependencies[1].policy must be one of "isolated", "pinned", "shared", got "mirrored"',
        'workloads[0].dependencies[2].target must be an http:// or https:// URL, got "not a url"',
        'workloads[0].dependencies[2].name must be unique, got "features" (also used by workloads[0].dependencies[1])',
      ]),
    );
  });

  it('requires exactly one way to reach an arm', () => {
    const issues = issuesOf(() => parseConfig({ workloads: [{ name: 'w', tier: 't', arms: { control: {}, treatment: { url: 'http://127.0.0.1:1' } } }] }));
    expect(issues).toEqual(['workloads[0].arms.control must have exactly one of "url" or "deploy"']);
  });

  it('caps a sequential design at 200 trials (its boundary is simulated once, at a cost that grows with max²); a fixed horizon may be longer', () => {
    expect(
      issuesOf(() =>
        parseConfig({
          workloads: [
            { name: 'w', tier: 't', arms: { control: { url: 'http://127.0.0.1:1' }, treatment: { url: 'http://127.0.0.1:2' } }, trials: { max: 500 } },
          ],
        }),
      ),
    ).toEqual(['workloads[0].trials.max must be <= 200, got 500']);
    expect(
      parseConfig({
        workloads: [
          { name: 'w', tier: 't', arms: { control: { url: 'http://127.0.0.1:1' }, treatment: { url: 'http://127.0.0.1:2' } }, trials: { count: 500 } },
        ],
      }).workloads[0]?.trials,
    ).toMatchObject({ min: 500, max: 500 });
  });

  it('refuses arms started early without start CPUs: they would start, and wait, on the CPUs the running trial measures', () => {
    const arms = { control: { deploy: { command: 'serve' } }, treatment: { deploy: { command: 'serve' } } };
    const issues = issuesOf(() => parseConfig({ workloads: [{ name: 'w', tier: 't', arms, trials: { prestart: true, slotCpus: ['1', '1'] } }] }));
    expect(issues).toEqual([
      expect.stringMatching(/^workloads\[0\]\.trials\.prestart prestart needs startCpus \(and slotCpus\): arms started early wait on their start CPUs/),
    ]);
    expect(
      parseConfig({ workloads: [{ name: 'w', tier: 't', arms, trials: { prestart: true, slotCpus: ['1', '1'], startCpus: ['0', '0'] } }] }).workloads[0]?.trials
        .prestart,
    ).toBe(true);
  });

  it('takes a whole number of requests, at most 10,000, to warm each fresh arm with before its trial', () => {
    const arms = { control: { deploy: { command: 'serve' } }, treatment: { deploy: { command: 'serve' } } };
    const trials = (prewarm: unknown) => ({ workloads: [{ name: 'w', tier: 't', arms, trials: { prewarm } }] });
    expect(issuesOf(() => parseConfig(trials(-1)))).toEqual(['workloads[0].trials.prewarm must be >= 0, got -1']);
    expect(issuesOf(() => parseConfig(trials(2.5)))).toEqual(['workloads[0].trials.prewarm must be an int, got 2.5']);
    expect(issuesOf(() => parseConfig(trials(20_000)))).toEqual(['workloads[0].trials.prewarm must be <= 10000, got 20000']);
    expect(parseConfig(trials(20)).workloads[0]?.trials.prewarm).toBe(20);
  });

  it('adds line and column for files and lists problems in file order', () => {
    const text = ['workloads:', '  - name: ranking', '    tier: ranking', '    trials:', '      count: 0', '    replay:', '      rat: 10', ''].join('\n');
    expect(issuesOf(() => parseConfigText(text, 'x.yaml'))).toEqual([
      'workloads[0].trials.count must be >= 1, got 0 (line 5:14)',
      'unknown key "rat" in workloads[0].replay (did you mean "rate"?) (line 7:7)',
    ]);
  });

  it('reports YAML syntax errors and duplicate keys with their line', () => {
    expect(issuesOf(() => parseConfigText('workloads:\n  - name: [unclosed\n', 'x.yaml'))[0]).toMatch(/^line \d+:\d+: Flow sequence/);
    expect(issuesOf(() => parseConfigText('store:\n  kind: local\nstore:\n  kind: local\n', 'x.yaml'))[0]).toMatch(/^line 3:.*unique/);
  });

  it('reads JSON files with the same positions', () => {
    const text = JSON.stringify({ workloads: [{ name: 'w', tier: 't', replay: { rate: 0 } }] }, null, 2);
    expect(issuesOf(() => parseConfigText(text, 'x.json'))).toEqual(['workloads[0].replay.rate must be > 0, got 0 (line 7:17)']);
  });

  it('finds the default file, honours --config, and uses defaults when there is no file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tandem-config-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    expect((await loadConfig({ cwd: dir })).path).toBeUndefined();
    await expect(loadConfig({ cwd: dir, requireFile: true })).rejects.toThrow(/no config file found/);
    await expect(loadConfig({ cwd: dir, path: 'missing.yaml' })).rejects.toThrow(/missing\.yaml does not exist/);
    await writeFile(join(dir, 'tandem.config.yaml'), 'workloads:\n  - name: w\n    tier: t\n');
    const loaded = await loadConfig({ cwd: dir });
    expect(loaded.path).toBe(join(dir, 'tandem.config.yaml'));
    expect(loaded.config.workloads[0]?.name).toBe('w');
  });

  it('exports a JSON Schema that forbids unknown keys and documents defaults', () => {
    const schema = configJsonSchema() as { additionalProperties: boolean; properties: Record<string, { description?: string }> };
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['store', 'queue', 'recorder', 'workloads', 'lattices']));
    expect(schema.properties.workloads?.description).toMatch(/replay/);
  });

  it('refuses a deployed control′ without a control deploy command to copy', () => {
    expect(() =>
      parseConfig({
        workloads: [
          {
            name: 'w',
            tier: 't',
            arms: { control: { url: 'http://127.0.0.1:1' }, treatment: { url: 'http://127.0.0.1:2' }, controlPrime: { deployed: true } },
          },
        ],
      }),
    ).toThrow(/workloads\[0\]\.arms\.controlPrime\.deployed.*controlPrime\.deployed needs a control arm with a deploy command to copy/);
  });
});
