import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ExperimentCancelledError, systemClock, type DetectorObservation } from '../../core/index.js';
import { runMonitor, type CheckResult, type Detector } from '../../guardrails/index.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

/** A detector that answers a script: V violation, C clear, E error (unreadable), N NaN. */
function scripted(name: string, script: string, overrides: Partial<Detector> = {}): Detector & { checkedAt: number[]; primed: number } {
  let i = 0;
  const detector = {
    name,
    warmupMs: 0,
    intervalMs: 10_000,
    consecutive: 3,
    maxDurationMs: 3_600_000,
    maxErrors: 3,
    onUnavailable: 'cancel' as const,
    checkedAt: [] as number[],
    primed: 0,
    async prime() {
      detector.primed++;
    },
    async check(): Promise<CheckResult> {
      detector.checkedAt.push(Date.now() - T0);
      const step = script[i++] ?? 'C';
      if (step === 'E') throw new Error('ECONNREFUSED');
      if (step === 'N') return { verdict: 'clear', value: Number.NaN, baseline: 0 };
      return { verdict: step === 'V' ? 'violation' : 'clear', value: step === 'V' ? 5 : 0, baseline: 0 };
    },
    ...overrides,
  };
  return detector;
}

function monitor(detectors: Detector[]) {
  const controller = new AbortController();
  const observations: DetectorObservation[] = [];
  const done = runMonitor({ experimentId: 'exp-m', detectors, clock: systemClock, controller, onObservation: (o) => observations.push(o) });
  return { controller, observations, done };
}

describe('dependency monitor loop (FIRE Figure 3)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('never cancels on transient violations, and retires the detector after its duration', async () => {
    const d = scripted('restarts', 'VCVCVCVC', { maxDurationMs: 75_000 });
    const { done, controller } = monitor([d]);
    await vi.advanceTimersByTimeAsync(200_000);
    expect(await done).toBeUndefined();
    expect(controller.signal.aborted).toBe(false);
    expect(d.primed).toBe(1);
    expect(d.checkedAt).toEqual([10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000]);
  });

  it('cancels after `consecutive` violations in a row, with the detector, first violation and reason', async () => {
    const d = scripted('malformed', 'CVVV');
    const { done, controller, observations } = monitor([d]);
    const cancellation = done;
    await vi.advanceTimersByTimeAsync(45_000);
    expect(await cancellation).toEqual({
      detector: 'malformed',
      reason: '3 violations in a row (value 5, baseline 0)',
      firstViolationMs: T0 + 20_000,
      terminatedMs: T0 + 40_000,
    });
    expect(controller.signal.reason).toBeInstanceOf(ExperimentCancelledError);
    expect((controller.signal.reason as ExperimentCancelledError).message).toBe('cancelled by detector malformed: 3 violations in a row (value 5, baseline 0)');
    expect(observations.map((o) => o.verdict)).toEqual(['clear', 'violation', 'violation', 'violation']);
  });

  it('a clear check resets the count', async () => {
    const d = scripted('restarts', 'VVCVVCVV', { maxDurationMs: 85_000 });
    const { done } = monitor([d]);
    await vi.advanceTimersByTimeAsync(100_000);
    expect(await done).toBeUndefined();
  });

  it('skips checks during warm-up without calling the detector', async () => {
    const d = scripted('restarts', 'VVV', { warmupMs: 25_000 });
    const { done, observations } = monitor([d]);
    await vi.advanceTimersByTimeAsync(55_000);
    await done;
    expect(observations.slice(0, 2).map((o) => [o.verdict, o.timeMs - T0])).toEqual([
      ['skipped', 10_000],
      ['skipped', 20_000],
    ]);
    expect(d.checkedAt).toEqual([30_000, 40_000, 50_000]);
  });

  it('keeps unreadable checks apart: they neither count nor reset, and maxErrors in a row cancel as unavailable', async () => {
    const mixed = scripted('mixed', 'VEVEV');
    const first = monitor([mixed]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect((await first.done)?.reason).toMatch(/^3 violations in a row/);
    expect(first.observations.map((o) => o.verdict)).toEqual(['violation', 'error', 'violation', 'error', 'violation']);

    const down = scripted('down', 'EEN');
    const secondStart = Date.now();
    const second = monitor([down]);
    await vi.advanceTimersByTimeAsync(40_000);
    expect(await second.done).toMatchObject({
      detector: 'down',
      reason: 'monitoring unavailable: 3 checks in a row could not be read (no data)',
      firstViolationMs: secondStart + 10_000,
    });

    const tolerant = scripted('tolerant', 'EEEEE', { onUnavailable: 'ignore', maxDurationMs: 55_000 });
    const third = monitor([tolerant]);
    await vi.advanceTimersByTimeAsync(80_000);
    expect(await third.done).toBeUndefined();
    expect(third.observations.every((o) => o.verdict === 'error' && o.message === 'ECONNREFUSED')).toBe(true);
  });

  it('runs each detector on its own schedule', async () => {
    const fast = scripted('fast', '', { intervalMs: 10_000, maxDurationMs: 45_000 });
    const slow = scripted('slow', '', { intervalMs: 15_000, maxDurationMs: 45_000 });
    const { done } = monitor([fast, slow]);
    await vi.advanceTimersByTimeAsync(100_000);
    await done;
    expect(fast.checkedAt).toEqual([10_000, 20_000, 30_000, 40_000]);
    expect(slow.checkedAt).toEqual([15_000, 30_000, 45_000]);
  });

  it('stops when the experiment is stopped from outside', async () => {
    const d = scripted('restarts', '');
    const { done, controller } = monitor([d]);
    await vi.advanceTimersByTimeAsync(25_000);
    controller.abort(new Error('experiment finished'));
    expect(await done).toBeUndefined();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(d.checkedAt).toEqual([10_000, 20_000]);
  });
});
