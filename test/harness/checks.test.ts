import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { systemClock, type DetectorObservation, type RequestOutcome } from '../../core/index.js';
import { runMonitor } from '../../guardrails/index.js';
import {
  LiveOutcomes,
  configuredFinalChecks,
  duringCheckDetector,
  judge,
  loadChecksModule,
  metricPolicies,
  runFinalChecks,
  type DuringCheck,
} from '../../harness/index.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

function outcome(arm: string, errorClass: RequestOutcome['errorClass'], intendedMs: number): RequestOutcome {
  return {
    experimentId: 'e',
    trial: 0,
    attempt: 1,
    arm,
    recordId: `r${intendedMs}`,
    intendedMs,
    latencyMs: 5,
    status: errorClass === '5xx' ? 503 : 200,
    bytes: 1,
    errorClass,
    bodyHash: '',
    first: true,
  };
}

describe('during checks on the monitor loop', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A check whose answers follow a script: V violation, C clear. */
  function scripted(script: string, overrides: Partial<DuringCheck> = {}): DuringCheck & { calls: number } {
    const check: DuringCheck & { calls: number } = {
      name: 'scripted',
      intervalMs: 1_000,
      consecutive: 3,
      calls: 0,
      evaluate: (): { ok: boolean } => ({ ok: (script[check.calls++] ?? 'C') === 'C' }),
      ...overrides,
    };
    return check;
  }

  function monitorWith(check: DuringCheck) {
    const controller = new AbortController();
    const observations: DetectorObservation[] = [];
    const live = new LiveOutcomes(systemClock);
    const done = runMonitor({
      experimentId: 'e',
      detectors: [duringCheckDetector(check, { experimentId: 'e', live, clock: systemClock })],
      clock: systemClock,
      controller,
      onObservation: (o) => observations.push(o),
    });
    return { controller, observations, done, live };
  }

  it('terminates only after a sustained violation: a clear check resets the count', async () => {
    const check = scripted('VVCVVCVVV');
    const { done, controller, observations } = monitorWith(check);
    await vi.advanceTimersByTimeAsync(20_000);
    const cancellation = await done;
    expect(cancellation).toMatchObject({ detector: 'check:scripted', firstViolationMs: T0 + 7_000, terminatedMs: T0 + 9_000 });
    expect(controller.signal.aborted).toBe(true);
    expect(check.calls).toBe(9);
    expect(observations.map((o) => o.verdict).join(',')).toBe('violation,violation,clear,violation,violation,clear,violation,violation,violation');
  });

  it('skips its warm-up and retires after its duration without cancelling', async () => {
    const check = scripted('VVVVVVVVVV', { warmupMs: 2_500, maxDurationMs: 1_000, consecutive: 3 });
    const { done, controller, observations } = monitorWith(check);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await done).toBeUndefined();
    expect(controller.signal.aborted).toBe(false);
    expect(observations.filter((o) => o.verdict === 'skipped')).toHaveLength(2);
    expect(check.calls).toBe(1);
  });

  it('reads live outcomes: a treatment 5xx share above a limit cancels', async () => {
    const check: DuringCheck = {
      name: 'treatment-5xx',
      intervalMs: 1_000,
      consecutive: 2,
      evaluate: ({ live }) => ({ ok: !(live.errorShare('treatment', '5xx') > 0.1), value: live.errorShare('treatment', '5xx') }),
    };
    const { done, live, observations } = monitorWith(check);
    live.add([outcome('control', '', T0), outcome('treatment', '', T0)]);
    await vi.advanceTimersByTimeAsync(1_000);
    live.add([outcome('treatment', '5xx', T0 + 1_000), outcome('treatment', '5xx', T0 + 1_100)]);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(await done).toMatchObject({ detector: 'check:treatment-5xx' });
    expect(observations[0]).toMatchObject({ verdict: 'clear', value: 0 });
    expect(observations[1]!.value).toBeCloseTo(2 / 3, 12);
  });
});

describe('LiveOutcomes', () => {
  it('keeps a bounded window and answers shares and quantiles', () => {
    let now = 100_000;
    const live = new LiveOutcomes({ now: () => now, monotonic: () => now, sleep: async () => undefined }, 10_000);
    live.add([outcome('treatment', '', 85_000), outcome('treatment', 'timeout', 95_000), outcome('treatment', '', 99_000)]);
    expect(live.recent('treatment')).toHaveLength(2);
    expect(live.errorShare('treatment')).toBe(0.5);
    expect(live.latency('treatment', 0.5)).toBe(5);
    now = 200_000;
    live.add([]);
    expect(live.recent('treatment')).toHaveLength(0);
    expect(Number.isNaN(live.errorShare('treatment'))).toBe(true);
  });
});

describe('final checks', () => {
  const verdict = judge([], { policies: metricPolicies([]) });

  it('report failures, including checks that throw, without stopping the others', async () => {
    const results = await runFinalChecks(
      [
        { name: 'passes', evaluate: () => ({ ok: true, value: 1 }) },
        {
          name: 'throws',
          evaluate: () => {
            throw new Error('boom');
          },
        },
        { name: 'fails', evaluate: async () => ({ ok: false, message: 'p99 above 200 ms' }) },
      ],
      { experimentId: 'e', verdict },
    );
    expect(results).toEqual([
      { name: 'passes', ok: true, value: 1, message: 'passed' },
      { name: 'throws', ok: false, message: 'threw: boom' },
      { name: 'fails', ok: false, message: 'p99 above 200 ms' },
    ]);
  });

  it('come from the workload: minimum NDCG and maximum status-mismatch share', async () => {
    const checks = configuredFinalChecks({ ranking: { k: 10, minNdcg: 0.95 }, maxStatusMismatchShare: 0.01 });
    const comparison = {
      pairs: 100,
      skipped: {},
      endpoints: [],
      comparedBodies: 100,
      statusMismatches: 2,
      statusMismatchShare: 0.02,
      statusExamples: [],
      bodyHashAgreement: 1,
      semanticAgreement: 1,
      noiseCancellation: false,
      fields: [],
      ranking: {
        pairs: 100,
        k: 10,
        reference: 'control' as const,
        ndcg: { mean: 0.97, min: 0.5 },
        kendallTau: { mean: 1, min: 1 },
        overlap: { mean: 1, min: 1 },
        noResultShare: { control: 0, treatment: 0 },
        perTrialNdcg: [],
      },
    };
    const results = await runFinalChecks(checks, { experimentId: 'e', verdict, comparison });
    expect(results.map((r) => [r.name, r.ok])).toEqual([
      ['ndcg@10>=0.95', true],
      ['status-mismatch<=0.01', false],
    ]);
    const none = await runFinalChecks(checks, { experimentId: 'e', verdict });
    expect(none.every((r) => !r.ok)).toBe(true);
  });
});

describe('checks modules', () => {
  it('load from TypeScript, and a malformed module is a config error naming the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tandem-checks-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await writeFile(
      join(dir, 'good.ts'),
      "const limit: number = 0.01;\nexport default { during: [{ name: 'x', evaluate: () => ({ ok: limit > 0 }) }], final: [] };\n",
    );
    await writeFile(join(dir, 'bad.ts'), "export default { during: [{ name: 'x' }] };\n");
    const set = await loadChecksModule('good.ts', dir);
    expect(set.during?.[0]?.name).toBe('x');
    await expect(loadChecksModule('bad.ts', dir)).rejects.toThrow(/bad\.ts must export default defineChecks/);
    await expect(loadChecksModule('missing.ts', dir)).rejects.toThrow(/harness\.checksModule: cannot load .*missing\.ts/);
  });
});
