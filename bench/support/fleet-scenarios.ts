/**
 * The verdict bench's scenarios of what the fleet pays (issue 68): changes the fastest process cannot see and a
 * robust location can set aside, and drift judged without a calibration. Every experiment is judged as a user
 * without a calibration meets it (the default), with CPU per request measured and judged where processes are.
 */
import { wilsonInterval } from '../../harness/index.js';
import { fastestProcessRows } from './fastest-process.js';
import { DESIGN, makeExperiment, sequentialJudge, type Experiment, type JudgedRun, type Scenario } from './verdict-scenarios.js';

/** Per-process CPU noise of the synthetic arms (lognormal sd per process and trial). */
const CPU_SIGMA = 0.01;

export const FLEET_SCENARIOS = {
  /** The law: control's processes slow with probability 0.10, the treatment's 0.25, each ×1.2 (+3% for the fleet). */
  slowShare: { name: 'slow share 0.10 → 0.25 ×1.2', shift: 0, processes: 3, slowShare: 0.1, treatmentSlowShare: 0.25, slowdown: 0.2, cpuSigma: CPU_SIGMA },
  /** Every treatment process ×1.22 in 15% of trials (+3.3% on average), none otherwise. */
  shock: { name: 'shocks in 15% of trials ×1.22', shift: 0, processes: 3, shock: { share: 0.15, factor: 1.22 }, cpuSigma: CPU_SIGMA },
  /** The slow-share law's control on both arms: what judging the mean costs an unchanged build. */
  aaSlowShare: { name: 'A/A slow share 0.10 ×1.2', shift: 0, processes: 3, slowShare: 0.1, slowdown: 0.2, cpuSigma: CPU_SIGMA },
  /** Per-arm AR(1) drift at ρ = 0.5, three times the base drift (most of a trial's noise), no calibration. */
  drift: { name: 'AR(1) drift, no calibration', shift: 0, armDriftRho: 0.5, armDriftScale: 3 },
} satisfies Record<string, Scenario>;

interface Tally {
  regressed: number;
  passed: number;
  trials: number;
}

const empty = (): Tally => ({ regressed: 0, passed: 0, trials: 0 });
const add = (tally: Tally, run: JudgedRun): void => {
  if (run.regressed) tally.regressed++;
  if (run.passed) tally.passed++;
  tally.trials += run.trials;
};

/** A share with its 95% Wilson interval's upper end: what `count` of `of` allows the true rate to be. */
export function rateWithUpper(count: number, of: number): { readonly rate: number; readonly upper95: number } {
  return { rate: Number((count / of).toFixed(4)), upper95: Number(wilsonInterval(count, of).high.toFixed(4)) };
}

const summary = (tally: Tally, count: number) => ({
  regressed: rateWithUpper(tally.regressed, count),
  passed: rateWithUpper(tally.passed, count),
  meanTrials: Number((tally.trials / count).toFixed(2)),
});

function run(scenario: Scenario, count: number, seedBase: number, each: (e: Experiment, run: JudgedRun) => void): void {
  for (let i = 0; i < count; i++) {
    const e = makeExperiment(seedBase + i, scenario, DESIGN.maxTrials);
    each(e, sequentialJudge(e));
  }
}

/**
 * The fleet figures on `count` experiments per scenario from `seedBase` on. Baselines on the same experiments: the
 * fastest process's CPU per request and latency (as Tandem judged until 2026-12-07), and, under drift, the look
 * that takes independent trials (ρ = 0, as deployed arms without a calibration were judged until then).
 */
export function fleetFigures(count: number, seedBase: number) {
  const slow = empty();
  const slowFastest = empty();
  run(FLEET_SCENARIOS.slowShare, count, seedBase, (e, judged) => {
    add(slow, judged);
    add(slowFastest, sequentialJudge({ ...e, trials: e.trials.map(fastestProcessRows) }));
  });
  const shock = empty();
  const shockFastest = empty();
  let passedSeen = 0;
  run(FLEET_SCENARIOS.shock, count, seedBase + 100_000, (e, judged) => {
    add(shock, judged);
    add(shockFastest, sequentialJudge({ ...e, trials: e.trials.map(fastestProcessRows) }));
    // A pass on trials none of which was hit is an A/A's pass: no judge can tell (its floor, not its error).
    if (judged.passed && e.shocked.some((t) => t < judged.trials)) passedSeen++;
  });
  const aa = empty();
  run(FLEET_SCENARIOS.aaSlowShare, count, seedBase + 200_000, (_, judged) => add(aa, judged));
  const drift = empty();
  const driftIndependent = empty();
  run(FLEET_SCENARIOS.drift, count, seedBase + 300_000, (e, judged) => {
    add(drift, judged);
    add(driftIndependent, sequentialJudge(e, undefined, 'huber', true, { kind: 'given', rho: 0 }));
  });
  return {
    slowShare: { ...summary(slow, count), fastestProcess: summary(slowFastest, count) },
    shock: { ...summary(shock, count), passedWithAShockJudged: rateWithUpper(passedSeen, count), fastestProcess: summary(shockFastest, count) },
    aaSlowShare: summary(aa, count),
    driftNoCalibration: { ...summary(drift, count), independentTrials: summary(driftIndependent, count) },
  };
}
