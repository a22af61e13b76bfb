import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ConfigError, parseConfig, systemClock, type DependencyErrorRecord, type DetectorConfig } from '../../core/index.js';
import { ERROR_RECORD_SCHEMA, SharedSource, dependencyHealthDetector, experimentAttributedDetector, runMonitor } from '../../guardrails/index.js';
import { startStack } from '../../examples/stack/index.js';
import { FEATURES, encodeTensor } from '../../examples/stack/model.js';

function detector(config: Record<string, unknown>): DetectorConfig {
  return parseConfig({ workloads: [{ name: 'w', tier: 't', detectors: [{ name: 'd', ...config }] }] }).workloads[0]!.detectors[0]!;
}

async function malformed(shard: string, job: string): Promise<number> {
  const response = await fetch(`${shard}/infer`, {
    method: 'POST',
    headers: { 'x-tandem-experiment': job.split('.')[0]!, 'x-tandem-arm': job.split('.')[1]!, 'x-tandem-job': job },
    body: JSON.stringify({ model: 'rank-video', batch: 4, shape: [1, FEATURES], data: encodeTensor(new Float32Array(FEATURES)) }),
  });
  await response.text();
  return response.status;
}

describe('detectors', () => {
  it('dependency health: worker restarts over the baseline captured at start', async () => {
    const stack = await startStack({ shards: 1 });
    onTestFinished(() => stack.stop());
    const shard = stack.urls.shards[0]!;
    await malformed(shard, 'old-exp.treatment'); // before monitoring: part of the baseline
    // A 1 ms interval: each check here reads a fresh scrape (checks within one interval share one).
    const d = dependencyHealthDetector(
      detector({
        kind: 'dependency-health',
        source: `${shard}/metrics`,
        interval: '1ms',
        rule: { metric: 'worker_restarts_total', compare: 'increase', above: 0 },
      }),
      systemClock,
    );
    await d.prime();
    expect(await d.check()).toMatchObject({ verdict: 'clear', value: 0, baseline: 1 });
    await malformed(shard, 'exp-1.treatment');
    expect(await d.check()).toMatchObject({ verdict: 'violation', value: 1, baseline: 1 });
    const missing = dependencyHealthDetector(
      detector({ kind: 'dependency-health', source: `${shard}/metrics`, rule: { metric: 'no_such_metric' } }),
      systemClock,
    );
    await missing.prime();
    expect(await missing.check()).toMatchObject({ verdict: 'error', value: null });
  });

  it("experiment attributed: counts this experiment's treatment errors only, naming the jobs", async () => {
    // Enough workers that each malformed request finds one alive to crash.
    const stack = await startStack({ shards: 1, workersPerShard: 4 });
    onTestFinished(() => stack.stop());
    const shard = stack.urls.shards[0]!;
    const since = Date.now();
    const d = experimentAttributedDetector(detector({ kind: 'experiment-attributed', source: `${shard}/errors`, rule: { above: 0 } }), {
      jobs: { control: 'exp-2.control', treatment: 'exp-2.treatment' },
      sinceMs: since,
    });
    await d.prime();
    await malformed(shard, 'other-exp.treatment'); // another experiment's fault
    await malformed(shard, 'exp-2.control'); // control is production's build
    expect(await d.check()).toMatchObject({ verdict: 'clear', value: 0, message: 'no errors from treatment; control has 1 (not counted)' });
    await malformed(shard, 'exp-2.treatment');
    const result = await d.check();
    expect(result).toMatchObject({ verdict: 'violation', value: 1 });
    expect(result.message).toMatch(/^1 error record\(s\) from treatment \(jobs: exp-2\.treatment\): contract-violation: rank-video: tensor shape \[1, 16\]/);
  });

  it('experiment attributed: lists every job a batch-level record implicates', async () => {
    const records: DependencyErrorRecord[] = [
      {
        timeMs: Date.now(),
        dependency: 'prediction',
        shard: 's0',
        kind: 'batch-failure',
        message: 'bad batch',
        experimentId: '',
        arm: '',
        trial: '',
        job: '',
        jobs: ['exp-3.treatment', 'someone-else.job'],
      },
    ];
    const server = createServer((_req, res) => res.end(JSON.stringify({ records }))).listen(0, '127.0.0.1');
    await once(server, 'listening');
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const d = experimentAttributedDetector(
      detector({ kind: 'experiment-attributed', source: `http://127.0.0.1:${(server.address() as AddressInfo).port}/errors` }),
      {
        jobs: { control: 'exp-3.control', treatment: 'exp-3.treatment' },
        sinceMs: 0,
      },
    );
    const result = await d.check();
    expect(result.verdict).toBe('violation');
    expect(result.message).toContain('(jobs: exp-3.treatment, someone-else.job)');
  });
});

describe('error-record format', () => {
  it('refuses a source answering another shape as configuration, at priming, naming the field — and the monitor cancels saying so at once', async () => {
    const bodies = [
      ['{"errors": []}', /did not answer \{ "records": \[\.\.\.\] \}/],
      ['not json', /did not answer JSON/],
      [
        JSON.stringify({
          records: [{ timeMs: 1, dependency: 'd', shard: '', kind: 'k', message: 'm', experimentId: '', arm: '', trial: '', job: '', jobs: 'exp.treatment' }],
        }),
        /records\[0\]\.jobs must be an array of strings/,
      ],
      [JSON.stringify({ records: [{ time: '2026-12-01' }] }), /records\[0\]\.timeMs must be a number/],
    ] as const;
    for (const [body, message] of bodies) {
      const server = createServer((_req, res) => res.end(body)).listen(0, '127.0.0.1');
      await once(server, 'listening');
      onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
      const source = `http://127.0.0.1:${(server.address() as AddressInfo).port}/errors`;
      const d = experimentAttributedDetector(detector({ kind: 'experiment-attributed', source }), {
        jobs: { control: 'exp.control', treatment: 'exp.treatment' },
        sinceMs: 0,
      });
      await expect(d.prime()).rejects.toThrow(ConfigError);
      await expect(d.prime()).rejects.toMatchObject({ issues: [expect.stringMatching(message)] });
      const controller = new AbortController();
      const cancellation = await runMonitor({ experimentId: 'exp', detectors: [d], clock: systemClock, controller });
      expect(cancellation?.reason).toMatch(/^configuration: detector source .* (did not answer|answered a record of another shape)/);
      expect(controller.signal.aborted).toBe(true);
    }
  });
});

describe('error-record schema', () => {
  it('docs/error-records.schema.json is the schema the detector checks', async () => {
    const { readFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    expect(JSON.parse(await readFile(join(import.meta.dirname, '..', '..', 'docs', 'error-records.schema.json'), 'utf8'))).toEqual(ERROR_RECORD_SCHEMA);
  });
});

describe('shared pollers', () => {
  it('200 experiments watching one source make one scrape per interval', async () => {
    let scrapes = 0;
    const server = createServer((_req, res) => {
      scrapes++;
      res.end('# TYPE worker_restarts_total counter\nworker_restarts_total{shard="s0"} 2\n');
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    let now = 1_000_000;
    const clock = { now: () => now, monotonic: () => now, sleep: () => Promise.resolve() };
    const shared = new SharedSource(clock);
    const config = detector({
      kind: 'dependency-health',
      source: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`,
      interval: '10s',
      rule: { metric: 'worker_restarts_total' },
    });
    const detectors = Array.from({ length: 200 }, () => dependencyHealthDetector(config, clock, shared));
    await Promise.all(detectors.map((d) => d.prime()));
    expect(scrapes).toBe(1);
    for (let interval = 1; interval <= 3; interval++) {
      now += 10_000;
      const results = await Promise.all(detectors.map((d) => d.check()));
      expect(results.every((r) => r.verdict === 'clear' && r.value === 0)).toBe(true);
      expect(scrapes).toBe(1 + interval);
    }
    expect(shared.scrapes).toBe(4);
  });
});
