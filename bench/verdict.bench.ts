/**
 * `npm run bench -- verdict [--experiments N]`: verdict quality on seeded
 * synthetic experiments (bench/support/verdict-scenarios.ts), at least 1,000
 * per figure. Tandem's sequential judge (looks after trials 4..30) against, on
 * the same data: the same judge with a fixed horizon, a naive threshold rule,
 * a plain t-test without calibration or slot term, and a Kayenta-style pooled
 * Mann–Whitney. The real-process counterpart is `verdict-stack`.
 */
import { calibrate, metricPolicies, trialMetrics } from '../harness/index.js';
import { syntheticExperiment } from './support/synthetic-experiment.js';
import { DESIGN, NOISE, fixedJudge, kayenta, makeExperiment, naiveThreshold, plainTTest, regressionAtAnyLook, sequentialJudge, slotSigns, type Experiment, type Scenario } from './support/verdict-scenarios.js';

const FIXED_MAX = 40;

interface BaselineRates {
  readonly naiveThreshold: number;
  readonly tTestUncalibrated: number;
  readonly kayentaPooled: number;
}

interface ScenarioResult {
  readonly regressed: number;
  readonly meanTrials: number;
  readonly anyFlagged: number;
  readonly baselines: BaselineRates;
}

const share = (count: number, of: number): number => Number((count / of).toFixed(4));

function runScenario(scenario: Scenario, count: number, seedBase: number, baselineTrials: number, judgeOne: (e: Experiment, seed: number) => void = () => undefined, trials: number = DESIGN.maxTrials): ScenarioResult {
  let regressed = 0;
  let usedTrials = 0;
  let anyFlagged = 0;
  const baseline = { naiveThreshold: 0, tTestUncalibrated: 0, kayentaPooled: 0 };
  for (let i = 0; i < count; i++) {
    const seed = seedBase + i;
    const e = makeExperiment(seed, scenario, Math.max(trials, baselineTrials));
    const run = sequentialJudge(e, calibration);
    if (run.regressed) regressed++;
    if (run.anyFlagged) anyFlagged++;
    usedTrials += run.trials;
    if (naiveThreshold(e, baselineTrials)) baseline.naiveThreshold++;
    if (plainTTest(e, baselineTrials)) baseline.tTestUncalibrated++;
    if (kayenta(e, baselineTrials, seed)) baseline.kayentaPooled++;
    judgeOne(e, seed);
  }
  return {
    regressed: share(regressed, count),
    meanTrials: Number((usedTrials / count).toFixed(2)),
    anyFlagged: share(anyFlagged, count),
    baselines: { naiveThreshold: share(baseline.naiveThreshold, count), tTestUncalibrated: share(baseline.tTestUncalibrated, count), kayentaPooled: share(baseline.kayentaPooled, count) },
  };
}

/** The workload's A/A calibration: 30 trials at the base noise, its false-positive rate measured by the sequential judge. */
const calibration = (() => {
  const data = syntheticExperiment({ seed: 99, trials: DESIGN.maxTrials, records: NOISE.records, shift: 0, armDrift: NOISE.armDrift, trialDrift: NOISE.trialDrift, recordSigma: NOISE.recordSigma, requestSigma: NOISE.requestSigma });
  return calibrate(
    data.flatMap((t) => trialMetrics(t, { seed: 99, resamples: 0 })),
    { experimentId: 'synthetic-aa', workload: 'synthetic', createdAtMs: 0, policies: metricPolicies([]), slotSigns, design: DESIGN, seed: 99, subsets: 200 },
  );
})();

export async function run(args: string[]): Promise<void> {
  const count = Math.max(1, Number(args[args.indexOf('--experiments') + 1]) || 1_000);
  const started = Date.now();
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;

  // +3%: the sequential judge, and the fixed-horizon judge at every n, on the same experiments.
  const fixedRegressed = new Array<number>(FIXED_MAX + 1).fill(0);
  const plus3 = runScenario({ name: '+3%', shift: 0.03 }, count, 30_000, DESIGN.maxTrials, (e) => {
    for (let n = 3; n <= FIXED_MAX; n++) if (fixedJudge(e, n)) fixedRegressed[n]!++;
  }, FIXED_MAX);
  const fixedPower = fixedRegressed.map((c) => c / count);
  // The fixed horizon the same judge needs for the power the sequential judge reached (the max is the bench's ceiling).
  const fixedTrials3 = fixedPower.findIndex((p, n) => n >= 3 && p >= plus3.regressed);
  const fixedN = fixedTrials3 > 0 ? fixedTrials3 : FIXED_MAX;
  log(`+3%: sequential power ${pct(plus3.regressed)} in ${plus3.meanTrials} trials on average; the fixed horizon needs ${fixedTrials3 > 0 ? fixedTrials3 : `> ${FIXED_MAX}`} trials for it (power by n: ${[4, 8, 12, 16, 20, 24, 32, 40].map((n) => `${n}:${pct(fixedPower[n]!)}`).join(' ')})`);

  // Every other scenario; the baselines judge with the fixed-horizon trial count (the same trial budget).
  let anyLook = 0;
  const aa = runScenario({ name: 'A/A', shift: 0 }, count, 10_000, fixedN, (e) => {
    if (regressionAtAnyLook(e)) anyLook++;
  });
  const noise15 = runScenario({ name: 'A/A, noise 1.5x calibrated', shift: 0, noiseScale: 1.5 }, count, 11_000, fixedN);
  const noise2 = runScenario({ name: 'A/A, noise 2x calibrated', shift: 0, noiseScale: 2 }, count, 12_000, fixedN);
  let slotOdd = 0;
  let slotEven = 0;
  const slot = runScenario({ name: 'A/A, 3% slot bias', shift: 0, slotBias: 0.03 }, count, 13_000, fixedN | 1, (e) => {
    if (fixedJudge(e, 5)) slotOdd++;
    if (fixedJudge(e, 6)) slotEven++;
  });
  const plus1 = runScenario({ name: '+1% (below the 2% threshold)', shift: 0.01 }, count, 20_000, fixedN);
  const plus2 = runScenario({ name: '+2%', shift: 0.02 }, count, 40_000, fixedN);
  const plus3Baselines = runScenario({ name: '+3% baselines', shift: 0.03 }, Math.min(count, 300), 30_000, fixedN);
  const plus5 = runScenario({ name: '+5%', shift: 0.05 }, count, 50_000, fixedN);

  const scenarios = { aa, noise15, noise2, slot, plus1, plus2, plus3: { ...plus3, baselines: plus3Baselines.baselines }, plus5 };
  log(`synthetic: ${count} experiments per scenario, ${NOISE.records} pairs per trial, design ${DESIGN.minTrials}..${DESIGN.maxTrials} trials; ${((Date.now() - started) / 1000).toFixed(0)} s`);
  log(`calibration: latency_shift noise sd ${pct(calibration.metrics.latency_shift!.sd)}, judge's own A/A false-positive rate ${pct(calibration.falsePositiveRate)}`);
  log(`scenario                         Tandem  trials | naive threshold  t-test  Kayenta (baselines at ${fixedN} trials)`);
  for (const [name, r] of Object.entries(scenarios)) log(`  ${name.padEnd(30)} ${pct(r.regressed).padStart(6)} ${String(r.meanTrials).padStart(6)} | ${pct(r.baselines.naiveThreshold).padStart(15)} ${pct(r.baselines.tTestUncalibrated).padStart(7)} ${pct(r.baselines.kayentaPooled).padStart(8)}`);

  const aaFprSlotBias = Math.max(slot.regressed, slotOdd / count, slotEven / count);
  const figures = {
    baseline: 'the same judge with a fixed horizon (fixedTrials3); naive threshold, uncalibrated t-test and Kayenta-style pooled judge on the same experiments',
    experimentsPerScenario: count,
    design: DESIGN,
    aaFprCalibrated: aa.regressed,
    aaFprNoise1_5x: noise15.regressed,
    aaFprNoise2x: noise2.regressed,
    aaFprSlotBias,
    aaFprSlotBiasParts: { sequential: slot.regressed, fixedOdd5: share(slotOdd, count), fixedEven6: share(slotEven, count) },
    aaFprSequential: share(anyLook, count),
    aaAnyMetricFlagged: aa.anyFlagged,
    belowThresholdCalledRegressed1: plus1.regressed,
    power2: plus2.regressed,
    power3: plus3.regressed,
    power5: plus5.regressed,
    meanTrials2: plus2.meanTrials,
    meanTrials3: plus3.meanTrials,
    meanTrials5: plus5.meanTrials,
    fixedTrials3: fixedN,
    meanTrials3VsFixed: Number((plus3.meanTrials / fixedN).toFixed(3)),
    calibrationFpr: calibration.falsePositiveRate,
    baselines: Object.fromEntries(Object.entries(scenarios).map(([name, r]) => [name, r.baselines])),
  };
  const targets = {
    aaFprCalibrated: { value: aa.regressed, max: 0.05 },
    aaFprNoise1_5x: { value: noise15.regressed, max: 0.05 },
    aaFprNoise2x: { value: noise2.regressed, max: 0.05 },
    aaFprSlotBias: { value: aaFprSlotBias, max: 0.05 },
    aaFprSequential: { value: share(anyLook, count), max: 0.05 },
    power3: { value: plus3.regressed, min: 0.9 },
    meanTrials3VsFixed: { value: Number((plus3.meanTrials / fixedN).toFixed(3)), max: 0.7 },
  };
  process.stdout.write(`${JSON.stringify({ bench: 'verdict', figures, targets })}\n`);
}
