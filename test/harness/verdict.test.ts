import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../core/index.js';
import { calibrate, judge, metricPolicies, type TrialMetric } from '../../harness/index.js';

/** Per-trial rows of one metric with the given effects. */
function rows(metric: string, effects: readonly number[], options: { points?: number; scale?: 'relative' | 'absolute'; firstTrial?: number } = {}): TrialMetric[] {
  return effects.map((effect, i) => ({
    metric,
    trial: (options.firstTrial ?? 0) + i,
    control: 10,
    treatment: 10 * (1 + effect),
    effect,
    low: Number.NaN,
    high: Number.NaN,
    points: options.points ?? 200,
    scale: options.scale ?? 'relative',
    unit: 'ms',
  }));
}

const policies = metricPolicies([], []);
const verdictOf = (metrics: TrialMetric[], metric: string, extra: Partial<Parameters<typeof judge>[1]> = {}) => judge(metrics, { policies, ...extra }).metrics.find((m) => m.metric === metric)!;

describe('per-metric verdicts', () => {
  it('calls a significant shift beyond the threshold a regression, with the reason in words', () => {
    const v = verdictOf(rows('latency_shift', [0.051, 0.049, 0.05, 0.052, 0.048]), 'latency_shift');
    expect(v.verdict).toBe('regression');
    expect(v.estimate).toBeCloseTo(0.05, 6);
    expect(v.low).toBeGreaterThan(0.02);
    expect(v.reason).toMatch(/^regression: \+5\.00% \[\+4\.\d\d%, \+5\.\d\d%\] over 5 trials; significant \(adjusted p = .* < 0\.05\) and beyond the \+2\.00% threshold$/);
  });

  it('calls the same shift an improvement when decrease is bad, and the reverse shift a regression', () => {
    const custom = metricPolicies([{ metric: 'throughput', direction: 'decrease-is-bad', threshold: 0.02, critical: false, mustHaveData: true }], []);
    const up = judge(rows('throughput', [0.05, 0.051, 0.049, 0.05, 0.05]), { policies: custom }).metrics.find((m) => m.metric === 'throughput')!;
    const down = judge(rows('throughput', [-0.05, -0.051, -0.049, -0.05, -0.05]), { policies: custom }).metrics.find((m) => m.metric === 'throughput')!;
    expect(up.verdict).toBe('improvement');
    expect(down.verdict).toBe('regression');
  });

  it('calls an interval inside ±threshold no change', () => {
    const v = verdictOf(rows('latency_shift', [0.001, -0.002, 0.0, 0.002, -0.001]), 'latency_shift');
    expect(v.verdict).toBe('no change');
    expect(v.reason).toMatch(/lies within ±2\.00%/);
  });

  it('calls a wide, non-significant interval inconclusive and says how many trials would resolve it', () => {
    const v = verdictOf(rows('latency_shift', [0.06, -0.05, 0.04, -0.03, 0.01]), 'latency_shift');
    expect(v.verdict).toBe('inconclusive');
    expect(v.suggestedTrials).toBeGreaterThan(5);
    expect(v.reason).toMatch(/could not have been seen/);
    expect(v.reason).toMatch(new RegExp(`About ${v.suggestedTrials} trials would resolve`));
  });

  it('never passes a metric with too few points or trials: it is no data', () => {
    expect(verdictOf(rows('latency_shift', [0.0, 0.0, 0.0], { points: 10 }), 'latency_shift')).toMatchObject({ verdict: 'no data', reason: expect.stringMatching(/only 30 data point\(s\), fewer than the 50 needed/) });
    expect(verdictOf(rows('latency_shift', [0.0], { points: 500 }), 'latency_shift').verdict).toBe('no data');
    // A metric that must have data and has none at all still appears, as no data.
    const verdict = judge(rows('latency_p99', [0, 0, 0]), { policies });
    expect(verdict.metrics.find((m) => m.metric === 'error_share')).toMatchObject({ verdict: 'no data' });
    expect(verdict.outcome).toBe('no data');
  });

  it('adjusts p-values across judged metrics (Benjamini–Hochberg), not across reported-only ones', () => {
    const metrics = [...rows('latency_shift', [0.03, 0.01, 0.05, 0.02, 0.04]), ...rows('some_counter_total', [0.5, 0.4, 0.6, 0.5, 0.45]), ...rows('latency_p99', [0, 0.001, -0.001, 0, 0.0005])];
    const verdict = judge(metrics, { policies });
    const mean = verdict.metrics.find((m) => m.metric === 'latency_shift')!;
    const counter = verdict.metrics.find((m) => m.metric === 'some_counter_total')!;
    expect(counter.judged).toBe(false);
    expect(Number.isNaN(counter.adjustedP)).toBe(true);
    expect(mean.adjustedP).toBeGreaterThan(mean.pValue);
  });
});

describe('experiment outcome', () => {
  const clean = (metric: string) => rows(metric, [0.001, -0.001, 0.0, 0.0005, -0.0005], metric === 'error_share' ? { scale: 'absolute' } : {});
  const base = ['latency_shift', 'latency_p99', 'error_share', 'cpu_seconds'];

  it('passes when no judged metric regresses', () => {
    const verdict = judge(base.flatMap(clean), { policies });
    expect(verdict.outcome).toBe('passed');
    expect(verdict.score).toBe(1);
  });

  it('fails on a critical metric alone, and passes a lone non-critical regression above the pass score', () => {
    const critical = judge([...base.filter((m) => m !== 'latency_p99').flatMap(clean), ...rows('latency_p99', [0.1, 0.11, 0.09, 0.1, 0.1])], { policies });
    expect(critical.outcome).toBe('regressed');
    expect(critical.reasons.join('\n')).toMatch(/critical metric latency_p99 regressed/);
    const lone = judge([...base.filter((m) => m !== 'cpu_seconds').flatMap(clean), ...rows('cpu_seconds', [0.1, 0.11, 0.09, 0.1, 0.1])], { policies });
    expect(lone.metrics.find((m) => m.metric === 'cpu_seconds')!.verdict).toBe('regression');
    expect(lone.outcome).toBe('passed');
    expect(lone.score).toBeCloseTo(0.75, 12);
  });
});

describe('A/A calibration', () => {
  it('measures slot bias, noise floor and a false-positive rate, and later verdicts use them', () => {
    const random = seededRandom(7);
    const n = 16;
    const signs = new Map<number, 1 | -1>(Array.from({ length: n }, (_, i) => [i, i % 2 === 0 ? 1 : -1] as const));
    // A/A per-trial effects: a 3% slot bias (treatment copy in slot A runs slower) plus 1% noise.
    const effects = Array.from({ length: n }, (_, i) => 0.03 * signs.get(i)! + (random() - 0.5) * 0.02);
    const calibration = calibrate(rows('latency_shift', effects), { experimentId: 'aa', workload: 'w', createdAtMs: 0, policies, slotSigns: signs, configuredTrials: 5, seed: 3, subsets: 100 });
    const m = calibration.metrics.latency_shift!;
    expect(m.slotBias.estimate).toBeGreaterThan(0.025);
    expect(m.slotBias.estimate).toBeLessThan(0.035);
    expect(m.slotBias.pValue).toBeLessThan(0.001);
    // The noise left once the slot bias is removed: the uniform ±1% jitter (sd 0.58%).
    expect(m.sd).toBeGreaterThan(0.003);
    expect(m.sd).toBeLessThan(0.009);
    expect(m.df).toBe(14);
    expect(m.noiseFloor).toBeGreaterThan(m.sd);
    expect(calibration.configuredTrials).toBe(5);
    expect(calibration.falsePositiveRate).toBeGreaterThanOrEqual(0);
    expect(calibration.falsePositiveRate).toBeLessThanOrEqual(1);

    // An experiment with 3 trials in slot A and 2 in slot B: the calibrated bias that remains is removed.
    const experimentSigns = new Map<number, 1 | -1>([[0, 1], [1, -1], [2, 1], [3, -1], [4, 1]]);
    const experiment = [0, 1, 2, 3, 4].map((t) => 0.03 * experimentSigns.get(t)! + 0.001 * (t - 2));
    const without = judge(rows('latency_shift', experiment), { policies, slotSigns: experimentSigns }).metrics.find((v) => v.metric === 'latency_shift')!;
    const withCalibration = judge(rows('latency_shift', experiment), { policies, slotSigns: experimentSigns, calibration }).metrics.find((v) => v.metric === 'latency_shift')!;
    expect(without.estimate).toBeCloseTo(0.006, 6);
    expect(withCalibration.slotBiasCorrection).toBeCloseTo(m.slotBias.estimate / 5, 6);
    expect(Math.abs(withCalibration.estimate)).toBeLessThan(0.003);
    // The experiment's spread matches the calibration, so the calibrated noise is pooled in: 4 + 14 df.
    expect(withCalibration).toMatchObject({ noise: 'pooled with calibration', df: 18, verdict: 'no change' });
    expect(without).toMatchObject({ noise: 'own trials', df: 4 });

    // An experiment far noisier than calibrated is judged on its own trials.
    const noisy = judge(rows('latency_shift', [0.2, -0.15, 0.1, -0.2, 0.05]), { policies, calibration }).metrics.find((v) => v.metric === 'latency_shift')!;
    expect(noisy).toMatchObject({ noise: 'own trials (above calibration)', df: 4 });
    expect(noisy.reason).toMatch(/noisier than calibrated: judged on its own trials/);
  });

  it('says when the calibrated noise floor is wider than the threshold', () => {
    const calibration = { experimentId: 'aa', workload: 'w', createdAtMs: 0, trials: 20, configuredTrials: 5, subsets: 10, falsePositiveRate: 0.02, metrics: { latency_shift: { sd: 0.05, df: 18, trials: 20, noiseFloor: 0.08, slotBias: { estimate: 0, low: -0.01, high: 0.01, pValue: 0.9 }, falsePositiveRate: 0.02, meanEffect: 0 } } };
    const v = judge(rows('latency_shift', [0.04, -0.05, 0.03, -0.02, 0.01]), { policies, calibration }).metrics.find((m) => m.metric === 'latency_shift')!;
    expect(v.verdict).toBe('inconclusive');
    expect(v.reason).toMatch(/calibrated noise floor at 5 trials \(\+\d+\.\d\d%\) is wider than the \+2\.00% threshold; \d+ trials would resolve it/);
  });
});
