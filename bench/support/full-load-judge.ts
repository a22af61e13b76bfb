/**
 * The baseline of the scale bench: the harness as it read an experiment
 * before issue 33 (5a4709f). Every outcome of every judged trial — bodies
 * and response views included — and every sample are loaded into memory,
 * every trial's metrics are recomputed on every look, and a report sorts
 * every latency of each arm for its quantiles. Kept here, outside the
 * product, only to be measured against.
 */
import type { RequestOutcome, Sample, WorkloadConfig } from '../../core/index.js';
import type { Store } from '../../store/index.js';
import {
  calibrate,
  judge,
  metricPolicies,
  missingDataCauses,
  selectTrials,
  trialMetrics,
  type Calibration,
  type ExperimentVerdict,
  type TrialMetric,
} from '../../harness/index.js';

async function loadEverything(
  store: Store,
  id: string,
  workload: WorkloadConfig,
  resamples: number,
): Promise<{
  verdict: ExperimentVerdict;
  outcomes: Map<number, RequestOutcome[]>;
  metrics: TrialMetric[];
  slotSigns: ReadonlyMap<number, number>;
  seed: number;
}> {
  const record = await store.experiments.get(id);
  if (!record) throw new Error(`no experiment ${id}`);
  const selection = selectTrials(record);
  const attemptOf = new Map(selection.used.map((t) => [t.index, t.attempt]));
  const outcomes = new Map<number, RequestOutcome[]>();
  for await (const o of store.outcomes.read(id)) {
    if (attemptOf.get(o.trial) !== o.attempt || (o.arm !== 'control' && o.arm !== 'treatment')) continue;
    const list = outcomes.get(o.trial) ?? [];
    list.push(o);
    outcomes.set(o.trial, list);
  }
  const samples = new Map<number, Sample[]>();
  for await (const s of store.samples.read(id)) {
    const list = samples.get(s.trial) ?? [];
    list.push(s);
    samples.set(s.trial, list);
  }
  const metrics = selection.used.flatMap((t) =>
    trialMetrics(
      {
        index: t.index,
        outcomes: outcomes.get(t.index) ?? [],
        samples: (samples.get(t.index) ?? []).filter((s) => s.timeMs >= t.startedAtMs && (t.endedAtMs === undefined || s.timeMs <= t.endedAtMs + 5_000)),
      },
      { seed: record.seed, resamples },
    ),
  );
  const design = record.spec.design as { minTrials: number; maxTrials: number };
  const verdict = judge(metrics, {
    policies: metricPolicies(workload.checks),
    alpha: workload.harness.alpha,
    minPoints: workload.harness.minPoints,
    slotSigns: selection.slotSigns,
    design,
    onInconclusive: workload.harness.onInconclusive,
    noDataCauses: missingDataCauses(selection),
  });
  return { verdict, outcomes, metrics, slotSigns: selection.slotSigns, seed: record.seed };
}

/** A sequential look as it was: everything loaded, every trial's metrics recomputed without intervals. */
export async function fullLoadLook(store: Store, id: string, workload: WorkloadConfig): Promise<ExperimentVerdict> {
  return (await loadEverything(store, id, workload, 0)).verdict;
}

/** The verdict and arm summaries of a report as they were: intervals bootstrapped per trial, every latency sorted. */
export async function fullLoadReport(
  store: Store,
  id: string,
  workload: WorkloadConfig,
): Promise<{ outcome: string; p99: Record<'control' | 'treatment', number> }> {
  const { verdict, outcomes } = await loadEverything(store, id, workload, 200);
  const p99 = (arm: 'control' | 'treatment'): number => {
    const sorted = [...outcomes.values()].flatMap((list) => list.filter((o) => o.arm === arm).map((o) => o.latencyMs)).sort((a, b) => a - b);
    return sorted[Math.floor(0.99 * (sorted.length - 1))] ?? Number.NaN;
  };
  return { outcome: verdict.outcome, p99: { control: p99('control'), treatment: p99('treatment') } };
}

/** `tandem calibrate` after its replay, as it was: everything loaded, every trial's metrics with intervals, then calibrated. */
export async function fullLoadCalibration(store: Store, id: string, workload: WorkloadConfig): Promise<Calibration> {
  const { metrics, slotSigns, seed } = await loadEverything(store, id, workload, 200);
  return calibrate(metrics, {
    experimentId: id,
    workload: workload.name,
    createdAtMs: Date.now(),
    policies: metricPolicies(workload.checks),
    slotSigns,
    design: { minTrials: workload.trials.min, maxTrials: workload.trials.max },
    seed,
    alpha: workload.harness.alpha,
    minPoints: workload.harness.minPoints,
  });
}
