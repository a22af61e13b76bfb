/**
 * The README's steps on a gRPC service (examples/catalog, docs/grpc.md): record
 * production calls through the sidecar, write the workload with the service's
 * .proto, run an experiment of the upgrade with each arm deployed per trial
 * (ready when its gRPC health answers SERVING), and
 * read the report — which names the changed field under the method that
 * changed, and the calls the upgrade answers NOT_FOUND.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CATALOG_PROTO_FILE, startCatalogService } from '../../examples/catalog/catalog-service.js';
import { startCatalog } from '../support/grpc-service.js';
import { startStack } from '../../examples/stack/index.js';
import { grpcInferenceClient } from '../../examples/stack/inference-client.js';
import { FEATURES } from '../../examples/stack/model.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { catalogClient } from '../support/grpc-service.js';
import { tempDir } from '../support/temp-dir.js';

/** Each arm is started per trial from the version it is given as its revision, ready when its gRPC health answers SERVING. */
function workloadConfig(): string {
  const deploy = `'${process.execPath}' '${join(REPO_ROOT, 'examples', 'catalog', 'run.mjs')}' --port {port} --version {revision}`;
  return [
    'workloads:',
    '  - name: catalog',
    '    tier: catalog',
    '    arms:',
    `      control: { deploy: { command: "${deploy}", readyProbe: grpc-health, readyTimeout: 60s } }`,
    `      treatment: { deploy: { command: "${deploy}", readyProbe: grpc-health, readyTimeout: 60s } }`,
    '    replay: { rate: 80, concurrency: 32, timeout: 5s, minAchievedShare: 0.2, compareResponses: true, wrap: true }',
    '    trials: { count: 2, warmup: 200ms, measure: 1500ms }',
    // No descriptors named: they are read from the control arm by server reflection.
    '    harness: { responses: { maxStatusMismatchShare: 0.01 } }',
    '    checks:',
    // Two short trials cannot decide latency or CPU; the status check decides this upgrade.
    '      - { metric: latency_shift, critical: false, threshold: 10 }',
    '      - { metric: latency_p99, critical: false, threshold: 10 }',
    '      - { metric: cpu_per_request, critical: false, threshold: 10 }',
    '      - { metric: rss_bytes, critical: false, threshold: 10 }',
    '',
  ].join('\n');
}

describe('the README tutorial on a gRPC service', () => {
  it('records gRPC calls, replays them into both versions and names what the upgrade changed, by method', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'tandem.config.yaml'), workloadConfig());
    const production = await startCatalogService('v1');
    onTestFinished(() => production.close());

    // 1. Record: the sidecar in front of production; gRPC clients call through it.
    const stop = new AbortController();
    const recorded = await runCli(['record', '--tier', 'catalog', '--listen', '127.0.0.1:0', '--upstream', production.url, '--rate', '1', '--json'], {
      cwd: dir,
      signal: stop.signal,
      onOut: async (text) => {
        const { url } = JSON.parse(text) as { url: string };
        const client = catalogClient(new URL(url).host);
        for (let i = 0; i < 60; i++) {
          if (i % 10 === 9) await client.list(3);
          else await client.lookup(i % 20 === 0 ? `z${i}` : `a${i % 15}`, { 'x-client': 'web' });
        }
        client.close();
        stop.abort();
      },
    });
    expect(recorded.code, recorded.err).toBe(0);
    const ls = await runCli(['corpus', 'ls', '--json'], { cwd: dir });
    expect(JSON.parse(ls.out).tiers).toEqual([expect.objectContaining({ tier: 'catalog', count: 60 })]);
    expect((await runCli(['validate'], { cwd: dir })).code).toBe(0);

    // 3. Run the upgrade, each arm deployed per trial: regressed on the NOT_FOUND answers.
    const run = await runCli(['run', 'catalog', '--control-revision', 'v1', '--treatment-revision', 'v2', '--format', 'json'], { cwd: dir });
    expect(run.code, run.err).toBe(1);
    const report = JSON.parse(run.out) as {
      experiment: { id: string };
      comparison: {
        pairs: number;
        comparedBodies: number;
        skipped: Record<string, number>;
        endpoints: { endpoint: string; differing: number; statusMismatches: number; fields: { path: string; counted: boolean }[] }[];
      };
    };
    expect(report.comparison.pairs).toBeGreaterThan(0);
    expect(report.comparison.comparedBodies).toBe(report.comparison.pairs);
    const endpoints = new Map(report.comparison.endpoints.map((e) => [e.endpoint, e]));
    const lookup = endpoints.get('gRPC tandem.test.Catalog/Lookup')!;
    expect(lookup.fields.filter((f) => f.counted).map((f) => f.path)).toContain('messages[].name');
    expect(lookup.statusMismatches).toBeGreaterThan(0);
    expect(endpoints.get('gRPC tandem.test.Catalog/List')).toMatchObject({ differing: 0, statusMismatches: 0 });

    // 4. Read the report: the method is named in the HTML.
    const html = await runCli(['report', report.experiment.id, '--format', 'html', '--out', 'report.html'], { cwd: dir });
    expect(html.code).toBe(1);
    const page = await readFile(join(dir, 'report.html'), 'utf8');
    expect(page).toContain('gRPC tandem.test.Catalog/Lookup');
    expect(page).toContain('messages[].name');
  }, 180_000);

  it('decodes with the .proto files named in the config, and counts responses as not compared when the arm has no reflection and none are named', async () => {
    const dir = await tempDir();
    const record = (grpc: string) =>
      [
        'workloads:',
        '  - name: catalog',
        '    tier: catalog',
        '    replay: { rate: 80, concurrency: 32, timeout: 5s, minAchievedShare: 0.2, compareResponses: true, wrap: true }',
        '    trials: { count: 1, warmup: 100ms, measure: 500ms }',
        `    harness: { responses: { ${grpc} } }`,
        '',
      ].join('\n');
    const production = await startCatalogService('v1');
    onTestFinished(() => production.close());
    const stop = new AbortController();
    await writeFile(join(dir, 'tandem.config.yaml'), record('ignoreFields: []'));
    await runCli(['record', '--tier', 'catalog', '--listen', '127.0.0.1:0', '--upstream', production.url, '--rate', '1', '--json'], {
      cwd: dir,
      signal: stop.signal,
      onOut: async (text) => {
        const client = catalogClient(new URL((JSON.parse(text) as { url: string }).url).host);
        for (let i = 0; i < 10; i++) await client.lookup(`a${i}`);
        client.close();
        stop.abort();
      },
    });
    // Arms without server reflection (the tests' own catalog service).
    const [control, treatment] = await Promise.all([startCatalog(), startCatalog({ nameSuffix: '!' })]);
    const replayAndReport = async (): Promise<{
      comparedBodies: number;
      skipped: Record<string, number>;
      endpoints: { endpoint: string; fields: { path: string }[] }[];
    }> => {
      const replay = await runCli(['replay', '--workload', 'catalog', '--control', `http://${control}`, '--treatment', `http://${treatment}`, '--json'], {
        cwd: dir,
      });
      expect(replay.code, replay.err).toBe(0);
      const id = (JSON.parse(replay.out.trim().split('\n').at(-1)!) as { experimentId: string }).experimentId;
      const report = await runCli(['report', id, '--format', 'json'], { cwd: dir });
      return (JSON.parse(report.out) as { comparison: Awaited<ReturnType<typeof replayAndReport>> }).comparison;
    };
    const unreflected = await replayAndReport();
    expect(unreflected.comparedBodies).toBe(0);
    expect(Object.keys(unreflected.skipped)).toEqual(['gRPC response, and no descriptors to decode it (harness.responses.grpc)']);
    await writeFile(join(dir, 'tandem.config.yaml'), record(`grpc: { protoFiles: ["${CATALOG_PROTO_FILE}"] }`));
    const named = await replayAndReport();
    expect(named.skipped).toEqual({});
    expect(named.endpoints.find((e) => e.endpoint === 'gRPC tandem.test.Catalog/Lookup')!.fields.map((f) => f.path)).toContain('messages[].name');
  }, 120_000);

  it("records the example stack's KServe v2 ModelInfer calls to a prediction shard, replays them into two shards and compares them by reflection", async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, 'tandem.config.yaml'),
      [
        'workloads:',
        '  - name: prediction',
        '    tier: prediction',
        '    replay: { rate: 40, concurrency: 16, timeout: 5s, minAchievedShare: 0.2, compareResponses: true, wrap: true }',
        '    trials: { count: 1, warmup: 100ms, measure: 500ms }',
        '    harness: { responses: { maxStatusMismatchShare: 0.01 } }',
        '',
      ].join('\n'),
    );
    const stack = await startStack({ shards: 2 });
    onTestFinished(() => stack.stop());
    const stop = new AbortController();
    const recorded = await runCli(
      ['record', '--tier', 'prediction', '--listen', '127.0.0.1:0', '--upstream', stack.urls.grpcShards[0]!, '--rate', '1', '--json'],
      {
        cwd: dir,
        signal: stop.signal,
        onOut: async (text) => {
          const client = grpcInferenceClient((JSON.parse(text) as { url: string }).url);
          for (let i = 0; i < 8; i++) {
            const values = Float32Array.from({ length: 2 * FEATURES }, (_, j) => ((i + j) % 5) / 5);
            await client.infer({ model: 'rank-video', batch: 2, shape: [2, FEATURES], values, headers: {}, signal: stop.signal });
          }
          await client.close();
          stop.abort();
        },
      },
    );
    expect(recorded.code, recorded.err).toBe(0);
    const replay = await runCli(
      ['replay', '--workload', 'prediction', '--control', stack.urls.grpcShards[0]!, '--treatment', stack.urls.grpcShards[1]!, '--json'],
      { cwd: dir },
    );
    expect(replay.code, replay.err).toBe(0);
    const id = (JSON.parse(replay.out.trim().split('\n').at(-1)!) as { experimentId: string }).experimentId;
    const report = JSON.parse((await runCli(['report', id, '--format', 'json'], { cwd: dir })).out) as {
      comparison: { pairs: number; comparedBodies: number; endpoints: { endpoint: string; differing: number; fields: { path: string }[] }[] };
    };
    expect(report.comparison.pairs).toBeGreaterThan(0);
    expect(report.comparison.comparedBodies).toBe(report.comparison.pairs);
    // Two shards of one model: the same scores; only the shard that answered differs, in the response's parameters.
    const infer = report.comparison.endpoints.find((e) => e.endpoint === 'gRPC inference.GRPCInferenceService/ModelInfer')!;
    expect(infer.fields.map((f) => f.path)).toEqual(['messages[].parameters.shard.string_param']);
  }, 120_000);
});
