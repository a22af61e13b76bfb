import { describe, expect, it } from 'vitest';
import { treatmentSlotSign } from '../../core/index.js';
import { judge, metricPolicies, type TrialMetric } from '../../harness/index.js';
import { formatLook, type LookSummary } from '../../executor/index.js';

const cpuRows = (effects: readonly number[]): TrialMetric[] =>
  effects.map((effect, trial) => ({
    metric: 'cpu_per_request',
    trial,
    control: 1e-3,
    treatment: 1e-3 * (1 + effect),
    effect,
    low: Number.NaN,
    high: Number.NaN,
    points: 2,
    scale: 'relative',
    unit: 'cpu s/request',
  }));

function lookOf(effects: readonly number[], secondsPerTrial: number): LookSummary {
  const verdict = judge(cpuRows(effects), {
    policies: metricPolicies([]),
    slotSigns: new Map(effects.map((_, t) => [t, treatmentSlotSign(t)])),
    design: { minTrials: 4, maxTrials: 30 },
  });
  const cpu = verdict.metrics.find((m) => m.metric === 'cpu_per_request')!;
  return {
    experimentId: 'e',
    trials: effects.length,
    decided: verdict.decided,
    outcome: verdict.outcome,
    secondsPerTrial,
    metrics: [
      {
        metric: cpu.metric,
        critical: true,
        verdict: cpu.verdict,
        estimate: cpu.estimate,
        low: cpu.low,
        high: cpu.high,
        scale: cpu.scale,
        threshold: cpu.policy!.threshold,
        ...(cpu.forecast ? { forecast: cpu.forecast } : {}),
      },
    ],
  };
}

describe('each look says what the noise allows (so inconclusive is never a surprise at the end)', () => {
  it('gives the trials and the time an unchanged build needs within the threshold, and what the last trial resolves', () => {
    // Six undecided trials of an unchanged build with a per-trial sd of about 1.5%.
    const line = formatLook(lookOf([0.012, -0.018, 0.004, 0.021, -0.009, -0.011], 14));
    expect(line).toMatch(
      /undecided, next trial \(at this noise cpu_per_request's ±2\.00% needs about \d+ trials \(about [\d.]+ (s|min)\); the design's 30 resolve \+\d\.\d\d%\)$/,
    );
    const trials = Number(/needs about (\d+) trials/.exec(line)![1]);
    // (z·σ₁/2%)² with σ₁ ≈ 1.5% and z ≈ 3–4: between ten and thirty trials, never fewer than the flips need.
    expect(trials).toBeGreaterThanOrEqual(8);
    expect(trials).toBeLessThanOrEqual(40);
    // Noisier trials need more: four times the variance, about four times the trials.
    const noisy = Number(/needs about (\d+) trials/.exec(formatLook(lookOf([0.024, -0.036, 0.008, 0.042, -0.018, -0.022], 14)))![1]);
    expect(noisy).toBeGreaterThan(3 * trials);
  });

  it('says nothing of the kind once decided', () => {
    const line = formatLook(
      lookOf(
        Array.from({ length: 12 }, (_, i) => 0.08 + 0.001 * (i % 3)),
        14,
      ),
    );
    expect(line).toMatch(/decided: regressed$/);
  });
});
