/**
 * `npm run bench -- verdict [--synthetic-only] [--experiments N]`: verdict quality.
 *
 * 1. Synthetic (bench/support/synthetic-experiment.ts): seeded A/A experiments
 *    give the false-positive rate; seeded +3% latency experiments with 5
 *    trials give the power. The same data judged by a Kayenta-style pooled
 *    Mann–Whitney judge (bench/support/kayenta-judge.ts) is the baseline.
 * 2. Example stack: the ranking service deployed per trial as control and
 *    treatment (crossover slots, CPU and RSS measured), once with the +5% CPU
 *    `latency` fault in the treatment and once unchanged; the harness must
 *    call the first a regression and the second no change.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configSchema, systemClock, type WorkloadConfig } from '../core/index.js';
import { createLocalStore } from '../store/index.js';
import { DeployedArms } from '../replayer/index.js';
import { SharedSource } from '../guardrails/index.js';
import { replayExperiment } from '../executor/index.js';
import { calibrate, evaluateExperiment, judge, metricPolicies, trialMetrics, type Calibration, type ExperimentReport } from '../harness/index.js';
import { rankingCorpus, startStack } from '../examples/stack/index.js';
import { syntheticExperiment } from './support/synthetic-experiment.js';
import { kayentaJudge } from './support/kayenta-judge.js';

const here = import.meta.dirname;

interface SyntheticFigures {
  readonly experiments: number;
  readonly regressedShare: number;
  readonly anyMetricFlaggedShare: number;
  readonly latencyShiftRegressionShare: number;
  readonly kayentaRegressionShare: number;
}

/** An A/A calibration of the synthetic workload: 20 trials, judged in subsets of 5 (what `tandem calibrate` does). */
function syntheticCalibration(seed: number, armDrift?: number): Calibration {
  const trials = syntheticExperiment({ seed, trials: 20, records: 1_500, shift: 0, ...(armDrift !== undefined ? { armDrift } : {}) });
  const metrics = trials.flatMap((t) => trialMetrics(t, { seed, resamples: 0 }));
  const slotSigns = new Map(trials.map((t) => [t.index, t.index % 2 === 0 ? 1 : -1] as const));
  return calibrate(metrics, { experimentId: 'synthetic-aa', workload: 'synthetic', createdAtMs: 0, policies: metricPolicies([], [...new Set(metrics.map((m) => m.metric))]), slotSigns, configuredTrials: 5, seed, subsets: 200 });
}

function syntheticRun(count: number, shift: number, seedBase: number, calibration?: Calibration, armDrift?: number): SyntheticFigures {
  let regressed = 0;
  let flagged = 0;
  let latencyShift = 0;
  let kayenta = 0;
  for (let i = 0; i < count; i++) {
    const seed = seedBase + i;
    const trials = syntheticExperiment({ seed, trials: 5, records: 1_500, shift, ...(armDrift !== undefined ? { armDrift } : {}) });
    const metrics = trials.flatMap((t) => trialMetrics(t, { seed, resamples: 0 }));
    // Crossover: slots alternate from trial to trial.
    const slotSigns = new Map(trials.map((t) => [t.index, t.index % 2 === 0 ? 1 : -1] as const));
    const verdict = judge(metrics, { policies: metricPolicies([], [...new Set(metrics.map((m) => m.metric))]), slotSigns, ...(calibration ? { calibration } : {}) });
    if (verdict.outcome === 'regressed') regressed++;
    if (verdict.metrics.some((m) => m.judged && (m.verdict === 'regression' || m.verdict === 'improvement'))) flagged++;
    if (verdict.metrics.find((m) => m.metric === 'latency_shift')?.verdict === 'regression') latencyShift++;
    const pooled = (arm: string): number[] => trials.flatMap((t) => t.outcomes.filter((o) => o.arm === arm).map((o) => o.latencyMs));
    if (kayentaJudge(pooled('control'), pooled('treatment'), { alpha: 0.05, floor: 0.02, seed }).verdict !== 'pass') kayenta++;
  }
  return { experiments: count, regressedShare: regressed / count, anyMetricFlaggedShare: flagged / count, latencyShiftRegressionShare: latencyShift / count, kayentaRegressionShare: kayenta / count };
}

async function stackRun(faults: string, seed: number): Promise<ExperimentReport> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-verdict-'));
  const stack = await startStack({ shards: 2, isolate: ['features', 'gateway', 'prediction'] });
  const store = createLocalStore({ dir: join(dir, '.tandem') });
  try {
    await store.corpus.append(rankingCorpus(3_000));
    const command = `${process.execPath} ${join(here, '..', 'bin', 'tandem.js')} example-stack --service ranking --port {port}`;
    const env = { FEATURES_URL: stack.urls.features, INFERENCE_URL: stack.urls.gateway };
    const workload: WorkloadConfig = configSchema.parse({
      workloads: [
        {
          name: 'ranking',
          tier: 'ranking',
          arms: { control: { deploy: { command, env: { ...env, STACK_FAULTS: '' } } }, treatment: { deploy: { command, env: { ...env, STACK_FAULTS: faults } } } },
          // Both arms share two cores with the stack and the replayer: 30 pairs/s keeps them well below the
          // ~65 pairs/s where they saturate (queueing would swamp the effect). Freshly started processes differ
          // by ~3% from trial to trial (the start-up lottery), so 16 trials are needed to bound an unchanged
          // build inside ±2%; VERDICT_* override for exploration.
          replay: { rate: Number(process.env.VERDICT_RATE ?? 30), concurrency: 32, timeout: '5s' },
          trials: { count: Number(process.env.VERDICT_TRIALS ?? 16), warmup: '3s', measure: process.env.VERDICT_MEASURE ?? '10s' },
        },
      ],
    }).workloads[0]!;
    const result = await replayExperiment({
      workload,
      store,
      clock: systemClock,
      sharedSource: new SharedSource(systemClock),
      kind: 'bench',
      deployed: true,
      seed,
      arms: () =>
        new DeployedArms({
          specs: { control: { command, env: { ...env, STACK_FAULTS: '' }, readyPath: '/healthz', readyTimeoutMs: 30_000 }, treatment: { command, env: { ...env, STACK_FAULTS: faults }, readyPath: '/healthz', readyTimeoutMs: 30_000 } },
          revisions: {},
          dependencyEnv: {},
          clock: systemClock,
        }),
    });
    if (result.status !== 'completed') throw new Error(`stack experiment ${result.status}: ${result.reason ?? ''}`);
    return await evaluateExperiment(store, result.experimentId, { workload });
  } finally {
    await store.close();
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const brief = (report: ExperimentReport, metric: string): Record<string, unknown> => {
  const m = report.metrics.find((v) => v.metric === metric);
  return m ? { verdict: m.verdict, estimate: Number(m.estimate.toFixed(4)), low: Number(m.low.toFixed(4)), high: Number(m.high.toFixed(4)) } : { verdict: 'absent' };
};

export async function run(args: string[]): Promise<void> {
  if (args.includes('--stack-only')) {
    const report = await stackRun(args[args.indexOf('--stack-only') + 1] === 'clean' ? '' : 'latency=5', 21);
    for (const metric of ['latency_shift', 'cpu_seconds', 'latency_p99']) {
      process.stderr.write(`${metric}: ${JSON.stringify(brief(report, metric))} per trial ${report.perTrial.filter((t) => t.metric === metric).map((t) => t.effect.toFixed(4)).join(' ')}\n`);
    }
    process.stderr.write(`trials ${report.trials.map((t) => `${t.status} ${JSON.stringify(t.slots)} ${t.achievedRate ?? ''}`).join(' | ')}\n`);
    for (const t of report.excludedTrials) process.stderr.write(`  left out: trial ${t.index}: ${t.reason}\n`);
    return;
  }
  const experiments = Number(args[args.indexOf('--experiments') + 1]) || 300;
  const started = Date.now();
  const calibration = syntheticCalibration(99);
  const aa = syntheticRun(experiments, 0, 10_000, calibration);
  const shifted = syntheticRun(Math.max(200, Math.round(experiments * 0.7)), 0.03, 50_000, calibration);
  const aaOwn = syntheticRun(experiments, 0, 10_000);
  const shiftedOwn = syntheticRun(Math.max(200, Math.round(experiments * 0.7)), 0.03, 50_000);
  // Placement noise four times larger: each arm's trial drifts by 2% on its own. Pooling requests across
  // trials (as Kayenta does) mistakes that drift for a change; the trial as the unit does not.
  const drifty = syntheticRun(experiments, 0, 90_000, syntheticCalibration(98, 0.02), 0.02);
  const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;
  process.stderr.write(`synthetic: ${aa.experiments} A/A and ${shifted.experiments} +3% experiments (5 trials of 1,500 pairs), judged twice, in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  process.stderr.write(`  calibration (20 A/A trials): latency_shift noise sd ${pct(calibration.metrics.latency_shift!.sd)}, floor at 5 trials ${pct(calibration.metrics.latency_shift!.noiseFloor)}, judge FPR ${pct(calibration.falsePositiveRate)}\n`);
  process.stderr.write(`  with calibration: A/A regressed ${pct(aa.regressedShare)}, any metric flagged ${pct(aa.anyMetricFlaggedShare)}; +3% regressed ${pct(shifted.regressedShare)}\n`);
  process.stderr.write(`  own trials only:  A/A regressed ${pct(aaOwn.regressedShare)}, any metric flagged ${pct(aaOwn.anyMetricFlaggedShare)}; +3% regressed ${pct(shiftedOwn.regressedShare)}\n`);
  process.stderr.write(`  Kayenta-style pooled judge: A/A ${pct(aa.kayentaRegressionShare)}; +3% ${pct(shifted.kayentaRegressionShare)}\n`);
  process.stderr.write(`  A/A with 2% per-arm trial drift: Tandem regressed ${pct(drifty.regressedShare)}, any flagged ${pct(drifty.anyMetricFlaggedShare)}; Kayenta-style ${pct(drifty.kayentaRegressionShare)}\n`);

  const figures: Record<string, unknown> = {
    aaExperiments: aa.experiments,
    shiftExperiments: shifted.experiments,
    aaFalsePositiveRate: aa.regressedShare,
    aaAnyMetricFlaggedRate: aa.anyMetricFlaggedShare,
    power3pct5trials: shifted.regressedShare,
    uncalibratedFalsePositiveRate: aaOwn.regressedShare,
    uncalibratedAnyMetricFlaggedRate: aaOwn.anyMetricFlaggedShare,
    uncalibratedPower3pct5trials: shiftedOwn.regressedShare,
    kayentaFalsePositiveRate: aa.kayentaRegressionShare,
    kayentaPower3pct: shifted.kayentaRegressionShare,
    powerRatioVsKayenta: shifted.kayentaRegressionShare > 0 ? Number((shifted.regressedShare / shifted.kayentaRegressionShare).toFixed(3)) : null,
    driftAaFalsePositiveRate: drifty.regressedShare,
    driftAaAnyMetricFlaggedRate: drifty.anyMetricFlaggedShare,
    kayentaDriftAaFalsePositiveRate: drifty.kayentaRegressionShare,
    calibratedNoiseSd: Number(calibration.metrics.latency_shift!.sd.toFixed(5)),
  };
  const targets: Record<string, { value: number; min?: number; max?: number }> = {
    aaFalsePositiveRate: { value: aa.regressedShare, max: 0.05 },
    aaAnyMetricFlaggedRate: { value: aa.anyMetricFlaggedShare, max: 0.05 },
    power3pct5trials: { value: shifted.regressedShare, min: 0.9 },
  };
  if (!args.includes('--synthetic-only')) {
    const fault = await stackRun('latency=5', 21);
    const unchanged = await stackRun('', 22);
    process.stderr.write(`stack, +5% CPU work: ${fault.verdict.outcome}; latency_shift ${JSON.stringify(brief(fault, 'latency_shift'))}, cpu ${JSON.stringify(brief(fault, 'cpu_seconds'))}\n`);
    process.stderr.write(`stack, unchanged: ${unchanged.verdict.outcome}; latency_shift ${JSON.stringify(brief(unchanged, 'latency_shift'))}, cpu ${JSON.stringify(brief(unchanged, 'cpu_seconds'))}\n`);
    figures.stackFault = { outcome: fault.verdict.outcome, latency_shift: brief(fault, 'latency_shift'), latency_mean: brief(fault, 'latency_mean'), latency_p50: brief(fault, 'latency_p50'), cpu_seconds: brief(fault, 'cpu_seconds'), reasons: fault.verdict.reasons };
    figures.stackUnchanged = { outcome: unchanged.verdict.outcome, latency_shift: brief(unchanged, 'latency_shift'), latency_mean: brief(unchanged, 'latency_mean'), latency_p50: brief(unchanged, 'latency_p50'), cpu_seconds: brief(unchanged, 'cpu_seconds'), reasons: unchanged.verdict.reasons };
    const faultCalled = fault.verdict.outcome === 'regressed' ? 1 : 0;
    const unchangedCalled = unchanged.verdict.outcome === 'passed' && brief(unchanged, 'latency_shift').verdict === 'no change' ? 1 : 0;
    targets.stackFaultCalledRegression = { value: faultCalled, min: 1 };
    targets.stackUnchangedCalledNoChange = { value: unchangedCalled, min: 1 };
  }
  process.stdout.write(`${JSON.stringify({ bench: 'verdict', figures, targets })}\n`);
}
