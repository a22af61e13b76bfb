import { describe, expect, it } from 'vitest';
import type { RequestOutcome, Sample } from '../../core/index.js';
import { implausibility, trialMetrics } from '../../harness/index.js';

function outcome(arm: string, recordId: string, latencyMs: number, errorClass: RequestOutcome['errorClass'] = '', intendedMs = 10_000): RequestOutcome {
  return {
    experimentId: 'e',
    trial: 2,
    attempt: 1,
    arm,
    recordId,
    intendedMs,
    latencyMs,
    status: errorClass === '' ? 200 : 503,
    bytes: arm === 'control' ? 100 : 110,
    errorClass,
    bodyHash: '',
    first: true,
  };
}

const sample = (arm: string, metric: string, timeMs: number, value: number, labels?: Record<string, string>): Sample => ({
  experimentId: 'e',
  trial: 2,
  arm,
  metric,
  timeMs,
  value,
  ...(labels ? { labels } : {}),
});

describe('per-trial metrics', () => {
  const outcomes = [
    outcome('control', 'a', 10),
    outcome('treatment', 'a', 12),
    outcome('control', 'b', 20),
    outcome('treatment', 'b', 21),
    outcome('control', 'c', 30),
    outcome('treatment', 'c', 33, '5xx', 11_000),
    // Unpaired: only one arm answered in the window; it does not enter paired metrics.
    outcome('control', 'd', 1_000),
  ];
  const samples = [
    sample('control', 'requests_total', 10_000, 100, { route: '/a' }),
    sample('control', 'requests_total', 10_000, 50, { route: '/b' }),
    sample('control', 'requests_total', 12_000, 170, { route: '/a' }),
    sample('control', 'requests_total', 12_000, 80, { route: '/b' }),
    sample('treatment', 'requests_total', 10_000, 0),
    sample('treatment', 'requests_total', 12_000, 300),
    sample('control', 'process_rss_bytes', 10_000, 100),
    sample('control', 'process_rss_bytes', 11_000, 300),
    sample('treatment', 'process_rss_bytes', 10_000, 200),
    sample('treatment', 'process_rss_bytes', 11_000, 400),
    sample('control', 'process_cpu_seconds', 10_000, 1.0),
    sample('control', 'process_cpu_seconds', 12_000, 1.4),
    sample('treatment', 'process_cpu_seconds', 10_000, 2.0),
    sample('treatment', 'process_cpu_seconds', 12_000, 2.36),
    // Outside the measurement window: ignored.
    sample('treatment', 'process_rss_bytes', 60_000, 9_999),
    sample('control', 'latency_bucket', 10_000, 5, { le: '10' }),
  ];
  const metrics = trialMetrics(
    {
      index: 2,
      outcomes,
      samples,
      dependencies: [
        { arm: 'control', dependency: 'prediction', calls: 30, replayedRequests: 10 },
        { arm: 'treatment', dependency: 'prediction', calls: 45, replayedRequests: 10 },
      ],
    },
    { seed: 1 },
  );
  const get = (name: string) => metrics.find((m) => m.metric === name)!;

  it('are each one the stored-metric check takes back (what it refuses is never something Tandem computed)', () => {
    expect(metrics.length).toBeGreaterThan(10);
    expect(metrics.map((m) => [m.metric, implausibility(m)]).filter(([, problem]) => problem !== undefined)).toEqual([]);
  });

  it('latency effects come from the paired records', () => {
    // mean of paired differences (2 + 1 + 3) / 3 = 2 over a control mean of 20
    expect(get('latency_mean')).toMatchObject({ trial: 2, control: 20, treatment: 22, points: 3 });
    expect(get('latency_mean').effect).toBeCloseTo(0.1, 12);
    expect(get('latency_p50').control).toBe(20);
    expect(get('latency_p50').treatment).toBe(21);
    expect(get('latency_p50').effect).toBeCloseTo(0.05, 12);
    expect(get('latency_p50').low).toBeLessThanOrEqual(get('latency_p50').high);
  });

  it('error shares are absolute differences, per class too', () => {
    expect(get('error_share')).toMatchObject({ control: 0, scale: 'absolute' });
    expect(get('error_share').effect).toBeCloseTo(1 / 3, 12);
    expect(get('error_share:5xx').effect).toBeCloseTo(1 / 3, 12);
    expect(get('bytes_mean').effect).toBeCloseTo(0.1, 12);
  });

  it('scraped counters become rates summed over label sets, gauges means; buckets are skipped', () => {
    // control: (250 - 150) / 2 s = 50/s; treatment: 300 / 2 s = 150/s
    expect(get('requests_total')).toMatchObject({ control: 50, treatment: 150, points: 4 });
    expect(get('requests_total').effect).toBeCloseTo(2, 12);
    expect(metrics.find((m) => m.metric === 'latency_bucket')).toBeUndefined();
  });

  it("a deployed arm's CPU per answered request and mean RSS: one point per arm per trial", () => {
    // control: 0.4 CPU s over the 4 requests it answered between its scrapes; treatment: 0.36 s over 3.
    expect(get('cpu_per_request')).toMatchObject({ points: 2, unit: 'cpu s/request' });
    expect(get('cpu_per_request').control).toBeCloseTo(0.1, 12);
    expect(get('cpu_per_request').treatment).toBeCloseTo(0.12, 12);
    expect(get('cpu_per_request').effect).toBeCloseTo(0.2, 12);
    expect(get('rss_bytes')).toMatchObject({ control: 200, treatment: 300, points: 2 });
    expect(metrics.find((m) => m.metric === 'process_cpu_seconds' || m.metric === 'cpu_seconds')).toBeUndefined();
  });

  it('fan-out per dependency from the router counters', () => {
    expect(get('fanout:prediction')).toMatchObject({ control: 3, treatment: 4.5 });
    expect(get('fanout:prediction').effect).toBeCloseTo(0.5, 12);
  });
});

describe('several processes per arm', () => {
  const outcome = (arm: 'control' | 'treatment', process: number, record: number, latencyMs: number): RequestOutcome => ({
    experimentId: 'e',
    trial: 0,
    attempt: 1,
    arm,
    recordId: `r${record}`,
    intendedMs: 1_000 + record,
    latencyMs,
    status: 200,
    bytes: 10,
    errorClass: '',
    bodyHash: 'x',
    first: arm === 'control',
    process,
  });
  const cpu = (arm: 'control' | 'treatment', process: number, mark: 'measure-start' | 'measure-end', value: number): Sample => ({
    experimentId: 'e',
    trial: 0,
    arm,
    metric: 'process_cpu_seconds',
    timeMs: mark === 'measure-start' ? 1_000 : 1_100,
    value,
    labels: { mark, tandem_process: String(process) },
  });
  /** One trial of three processes per arm, each `slow` times its arm's base: record r costs r + 1 ms, a request 1 ms of CPU. */
  const trialOf = (slow: Record<'control' | 'treatment', readonly number[]>) => {
    const outcomes: RequestOutcome[] = [];
    for (let r = 0; r < 60; r++)
      for (const arm of ['control', 'treatment'] as const) for (let p = 0; p < 3; p++) outcomes.push(outcome(arm, p, r, (r + 1) * slow[arm][p]!));
    // 60 answered requests per process, each 1 ms of CPU times its factor.
    const samples = (['control', 'treatment'] as const).flatMap((arm) =>
      [0, 1, 2].flatMap((p) => [cpu(arm, p, 'measure-start', 1), cpu(arm, p, 'measure-end', 1 + 0.06 * slow[arm][p]!)]),
    );
    return trialMetrics({ index: 0, outcomes, samples }, { seed: 1, resamples: 0 });
  };

  it("judges each arm by its processes' mean, on CPU and latency, and keeps every process's value for the report", () => {
    // Control process 1 and treatment process 0 are 20% slow (a bad layout), the treatment 3% slower.
    const metrics = trialOf({ control: [1, 1.2, 1], treatment: [1.2, 1.03, 1.03] });
    // What the fleet pays: 1.0867 ms a request against 1.0667 (the fastest processes alone, 1.03 against 1, said +3%).
    const fleet = 1.0867 / 1.0667 - 1;
    const cpuMetric = metrics.find((m) => m.metric === 'cpu_per_request')!;
    expect(cpuMetric.effect).toBeCloseTo(fleet, 3);
    expect(cpuMetric.processes?.control.map((v) => v * 1e3)).toEqual([1, 1.2, 1].map((v) => expect.closeTo(v, 10)));
    const latency = metrics.find((m) => m.metric === 'latency_shift')!;
    expect(latency.effect).toBeCloseTo(fleet, 3);
    // Each process's level against its arm's mean: the slow ones stand out.
    expect(Math.max(...latency.processes!.control)).toBeGreaterThan(0.1);
  });

  it('counts a change that makes a slow process more common, which the fastest process never showed (the finding)', () => {
    // The same build except that one of the treatment's three processes is now slow (+20%): +6.7% for the fleet.
    const metrics = trialOf({ control: [1, 1, 1], treatment: [1, 1.2, 1] });
    for (const name of ['cpu_per_request', 'latency_shift']) expect(metrics.find((m) => m.metric === name)!.effect).toBeCloseTo(1.2 / 3 + 2 / 3 - 1, 3);
    expect(metrics.filter((m) => implausibility(m) !== undefined)).toEqual([]);
  });

  it('measures a trial of 100k pairs (found by the scale bench: a spread of 200k send times overflowed the call stack)', () => {
    const outcomes: RequestOutcome[] = [];
    for (let i = 0; i < 100_000; i++) {
      for (const arm of ['control', 'treatment'] as const)
        outcomes.push({
          experimentId: 'e',
          trial: 0,
          attempt: 1,
          arm,
          recordId: `r${i}`,
          intendedMs: 1_000 + i,
          latencyMs: arm === 'control' ? 10 : 11,
          status: 200,
          bytes: 1,
          errorClass: '',
          bodyHash: '',
          first: arm === 'control',
        });
    }
    const samples: Sample[] = (['control', 'treatment'] as const).flatMap((arm) =>
      [0, 50_000, 101_000].map((t, i) => ({ experimentId: 'e', trial: 0, arm, metric: 'requests_total', timeMs: 1_000 + t, value: i * 100 })),
    );
    const metrics = trialMetrics({ index: 0, outcomes, samples }, { seed: 1, resamples: 0 });
    expect(metrics.find((m) => m.metric === 'latency_shift')!.effect).toBeCloseTo(0.1, 10);
    expect(metrics.find((m) => m.metric === 'requests_total')!.points).toBe(6);
  });
});
