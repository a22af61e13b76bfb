import { describe, expect, it } from 'vitest';
import type { RequestOutcome, Sample } from '../../core/index.js';
import { trialMetrics } from '../../harness/index.js';

function outcome(arm: string, recordId: string, latencyMs: number, errorClass: RequestOutcome['errorClass'] = '', intendedMs = 10_000): RequestOutcome {
  return { experimentId: 'e', trial: 2, attempt: 1, arm, recordId, intendedMs, latencyMs, status: errorClass === '' ? 200 : 503, bytes: arm === 'control' ? 100 : 110, errorClass, bodyHash: '', first: true };
}

const sample = (arm: string, metric: string, timeMs: number, value: number, labels?: Record<string, string>): Sample => ({ experimentId: 'e', trial: 2, arm, metric, timeMs, value, ...(labels ? { labels } : {}) });

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
  const metrics = trialMetrics({ index: 2, outcomes, samples, dependencies: [{ arm: 'control', dependency: 'prediction', calls: 30, replayedRequests: 10 }, { arm: 'treatment', dependency: 'prediction', calls: 45, replayedRequests: 10 }] }, { seed: 1 });
  const get = (name: string) => metrics.find((m) => m.metric === name)!;

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
