import { describe, expect, it } from 'vitest';
import { seededRandom, treatmentSlotSign } from '../../core/index.js';
import { judge, metricPolicies, type Calibration, type TrialMetric } from '../../harness/index.js';

function cpuRows(effects: readonly number[]): TrialMetric[] {
  return effects.map((effect, trial) => ({
    metric: 'cpu_per_request',
    trial,
    control: 10,
    treatment: 10 * (1 + effect),
    effect,
    low: Number.NaN,
    high: Number.NaN,
    points: 60,
    scale: 'relative' as const,
    unit: 'ms',
  }));
}

const policies = metricPolicies([{ metric: 'cpu_per_request', direction: 'increase-is-bad', threshold: 0.02, critical: true, mustHaveData: true }]);
const design = { minTrials: 4, maxTrials: 30 };
const abba = (n: number): Map<number, number> => new Map(Array.from({ length: n }, (_, i) => [i, treatmentSlotSign(i)]));

/**
 * An identical build whose arms drift apart and back across trials: per-arm AR(1) drift at ρ = 0.5, most of a trial's
 * noise (the verdict bench's drift law). Drawn so that the drift wanders above the threshold for a stretch.
 */
function driftingAa(seed: number, n: number): number[] {
  const random = seededRandom(seed);
  const z = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const state = { control: z(), treatment: z() };
  return Array.from({ length: n }, () => {
    state.control = 0.5 * state.control + Math.sqrt(0.75) * z();
    state.treatment = 0.5 * state.treatment + Math.sqrt(0.75) * z();
    return 0.03 * (state.treatment - state.control) + 0.004 * z();
  });
}

const cpuOf = (effects: readonly number[], extra: Partial<Parameters<typeof judge>[1]> = {}) =>
  judge(cpuRows(effects), { policies, design, slotSigns: abba(effects.length), ...extra }).metrics.find((m) => m.metric === 'cpu_per_request')!;

describe('the serial correlation a look allows for', () => {
  it('is the look’s own for deployed arms without a calibration: drifting identical builds are not called regressed as ρ = 0 called them (the finding)', () => {
    let regressedAsIndependent = 0;
    let regressedOwn = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const effects = driftingAa(seed, 16);
      if (cpuOf(effects, { serialCorrelation: { kind: 'given', rho: 0 } }).verdict === 'regression') regressedAsIndependent++;
      if (cpuOf(effects).verdict === 'regression') regressedOwn++;
    }
    // Judged as independent (deployed arms until 2026-12-07) several of these are called regressed; with the look's
    // own correlation fewer are, and never more.
    expect(regressedAsIndependent).toBeGreaterThan(regressedOwn);
  });

  it('is the calibration’s when it measured a material one, and the look’s own when it measured none', () => {
    const effects = driftingAa(7, 16);
    const calibrationWith = (autocorrelation: number): Calibration =>
      ({
        metrics: { cpu_per_request: { sd: 0.03, typicalSd: 0.0001, df: 38, autocorrelation, autocorrelationSe: 0.16, trials: 40 } },
      }) as unknown as Calibration;
    const own = cpuOf(effects);
    // ρ = 0.02 is within noise of zero: no assumption of independence is taken from it.
    expect(cpuOf(effects, { calibration: calibrationWith(0.02) }).high).toBeCloseTo(own.high, 10);
    const material = cpuOf(effects, { calibration: calibrationWith(0.6) });
    const independent = cpuOf(effects, { serialCorrelation: { kind: 'given', rho: 0 } });
    expect(material.high - material.low).toBeGreaterThan(1.5 * (independent.high - independent.low));
  });
});
