import { describe, expect, it } from 'vitest';
import { judge, metricPolicies, type TrialMetric } from '../../harness/index.js';

/**
 * The demo's +5% work step with one core kept busy (2026-12-03, rate 20 pairs/s): CPU per request of its first
 * ten trials, treatment in slot B first. Without a calibration the looks estimated their own lag-1
 * autocorrelation; these ten happen to run high then low, the estimate hit its 0.9 clamp and the interval came
 * out [−10.2%, +18.4%] around +3%, on trials whose spread is about 2%.
 */
const STEP_TRIALS = [0.03082, 0.02782, 0.05624, 0.04545, 0.04484, 0.03404, 0.03738, 0.0149, 0.0219, -0.02538];

function cpuRows(effects: readonly number[]): TrialMetric[] {
  return effects.map((effect, trial) => ({ metric: 'cpu_per_request', trial, control: 10, treatment: 10 * (1 + effect), effect, low: Number.NaN, high: Number.NaN, points: 60, scale: 'relative' as const, unit: 'ms' }));
}

const policies = metricPolicies([{ metric: 'cpu_per_request', direction: 'increase-is-bad', threshold: 0.02, critical: true, mustHaveData: true }]);
const design = { minTrials: 4, maxTrials: 32 };

function cpuVerdict(slotSigns: ReadonlyMap<number, number> | undefined) {
  const verdict = judge(cpuRows(STEP_TRIALS), { policies, design, alpha: 0.01, ...(slotSigns ? { slotSigns } : {}) });
  return verdict.metrics.find((m) => m.metric === 'cpu_per_request')!;
}

describe('the serial correlation an uncalibrated look allows for', () => {
  it('is none for arms deployed per trial in alternating slots: the busy step’s ten trials give an interval of their own spread', () => {
    const cpu = cpuVerdict(new Map(STEP_TRIALS.map((_, i) => [i, i % 2 === 0 ? -1 : 1])));
    // Trials from −2.5% to +5.6%, most within a point of +3%: a few points either side, not fourteen.
    expect(cpu.high - cpu.low).toBeLessThan(0.08);
    expect(cpu.low).toBeGreaterThan(-0.03);
    expect(cpu.estimate).toBeGreaterThan(0.025);
    expect(cpu.estimate).toBeLessThan(0.04);
  });

  it('is the look’s own estimate for arms that persist across trials (no slots), so the same trials are judged more cautiously', () => {
    const deployed = cpuVerdict(new Map(STEP_TRIALS.map((_, i) => [i, i % 2 === 0 ? -1 : 1])));
    const persistent = cpuVerdict(undefined);
    expect(persistent.high - persistent.low).toBeGreaterThan(1.5 * (deployed.high - deployed.low));
  });
});
