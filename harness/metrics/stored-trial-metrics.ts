/**
 * Per-trial metrics computed once, when a trial completes, and stored with
 * the experiment as a `trial-metrics` event: every later look, report,
 * dashboard page and calibration judges them without reading the trial's
 * outcomes again. A trial that has none stored (an experiment of an older
 * Tandem, a worker killed between the trial's end and the event) is computed
 * from its own outcomes and samples only, so memory holds one trial at most.
 */
import type { ExperimentRecord, Sample, TrialRecord } from '../../core/index.js';
import type { ReadOptions, Store } from '../../store/index.js';
import { trialMetrics, type ArmProcessValues, type TrialData, type TrialMetric } from './trial-metrics.js';

export const TRIAL_METRICS_EVENT = 'trial-metrics';
/** Raised when what a trial's metrics hold or how they are computed changes: older events are recomputed, not misread. */
const TRIAL_METRICS_VERSION = 1;

type TrialReads = Pick<Store, 'outcomes' | 'samples'>;

/** One trial attempt's inputs: its outcomes (timing only) and the samples scraped while it ran. */
export async function trialDataOf(store: TrialReads, experimentId: string, trial: TrialRecord, options: ReadOptions = {}): Promise<TrialData> {
  const outcomes = [];
  for await (const o of store.outcomes.read(experimentId, { ...options, trial: trial.index, fields: 'timing' })) {
    // Outcomes of replaced attempts stay stored; only this attempt counts.
    if (o.attempt === trial.attempt && (o.arm === 'control' || o.arm === 'treatment')) outcomes.push(o);
  }
  const samples: Sample[] = [];
  for await (const s of store.samples.read(experimentId, { ...options, trial: trial.index })) {
    // Samples are scraped through warm-up and a little beyond; trial-metrics picks the measurement window.
    if (s.timeMs >= trial.startedAtMs && (trial.endedAtMs === undefined || s.timeMs <= trial.endedAtMs + 5_000)) samples.push(s);
  }
  const dependencies = trial.details?.dependencies;
  return { index: trial.index, outcomes, samples, ...(Array.isArray(dependencies) ? { dependencies: dependencies as TrialData['dependencies'] } : {}) };
}

/** Compute a completed trial attempt's metrics from its data and store them; returns them. */
export async function measureCompletedTrial(
  store: TrialReads & Pick<Store, 'experiments'>,
  experimentId: string,
  trial: TrialRecord,
  options: { readonly seed: number; readonly nowMs: number; readonly signal?: AbortSignal },
): Promise<TrialMetric[]> {
  const data = await trialDataOf(store, experimentId, trial, options.signal ? { signal: options.signal } : {});
  const metrics = trialMetrics(data, { seed: options.seed });
  await store.experiments.appendEvent({
    experimentId,
    timeMs: options.nowMs,
    type: TRIAL_METRICS_EVENT,
    message: `trial ${trial.index + 1} attempt ${trial.attempt}: ${metrics.length} metric(s) from ${data.outcomes.length} outcome(s)`,
    data: { trial: trial.index, attempt: trial.attempt, version: TRIAL_METRICS_VERSION, metrics: metrics.map(encodeMetric) },
  });
  return metrics;
}

/** The metrics of `used` trials: stored ones where a matching event exists, else computed from each trial's own data. */
export async function trialMetricsOf(
  store: TrialReads & Pick<Store, 'experiments'>,
  record: ExperimentRecord,
  used: readonly TrialRecord[],
  options: ReadOptions & { readonly resamples?: number },
): Promise<{ metrics: TrialMetric[]; recomputed: number[] }> {
  const stored = new Map<string, TrialMetric[]>();
  for (const event of await store.experiments.events(record.id, { ...options, types: [TRIAL_METRICS_EVENT] })) {
    const decoded = decodeEvent(event.data);
    if (decoded) stored.set(`${decoded.trial}/${decoded.attempt}`, decoded.metrics);
  }
  const metrics: TrialMetric[] = [];
  const recomputed: number[] = [];
  for (const trial of used) {
    const found = stored.get(`${trial.index}/${trial.attempt}`);
    if (found) {
      metrics.push(...found);
      continue;
    }
    recomputed.push(trial.index);
    const data = await trialDataOf(store, record.id, trial, options);
    metrics.push(...trialMetrics(data, { seed: record.seed, ...(options.resamples !== undefined ? { resamples: options.resamples } : {}) }));
  }
  return { metrics, recomputed };
}

// JSON has no NaN: a metric's undefined values (no interval, a zero control) are stored as null.
const toJson = (value: number): number | null => (Number.isFinite(value) ? value : null);
const fromJson = (value: unknown): number | undefined => (value === null ? Number.NaN : typeof value === 'number' ? value : undefined);

function encodeMetric(m: TrialMetric): Record<string, unknown> {
  return {
    metric: m.metric,
    trial: m.trial,
    control: toJson(m.control),
    treatment: toJson(m.treatment),
    effect: toJson(m.effect),
    low: toJson(m.low),
    high: toJson(m.high),
    points: m.points,
    scale: m.scale,
    unit: m.unit,
    ...(m.processes ? { processes: { control: m.processes.control.map(toJson), treatment: m.processes.treatment.map(toJson) } } : {}),
  };
}

function decodeNumbers(value: unknown): number[] | undefined {
  if (!Array.isArray(value) || value.length > 1_000) return undefined;
  const numbers = value.map(fromJson);
  return numbers.every((n) => n !== undefined) ? (numbers as number[]) : undefined;
}

/** A stored metric, checked field by field (stored data is input like any other); undefined when any field is wrong. */
function decodeMetric(value: unknown, trial: number): TrialMetric | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const m = value as Record<string, unknown>;
  const numbers = (['control', 'treatment', 'effect', 'low', 'high'] as const).map((k) => fromJson(m[k]));
  if (numbers.some((n) => n === undefined)) return undefined;
  if (typeof m.metric !== 'string' || m.trial !== trial || typeof m.points !== 'number' || (m.scale !== 'relative' && m.scale !== 'absolute') || typeof m.unit !== 'string') return undefined;
  let processes: ArmProcessValues | undefined;
  if (m.processes !== undefined) {
    const p = m.processes as Record<string, unknown> | null;
    const control = decodeNumbers(p?.control);
    const treatment = decodeNumbers(p?.treatment);
    if (!control || !treatment) return undefined;
    processes = { control, treatment };
  }
  const [control, treatment, effect, low, high] = numbers as number[];
  return { metric: m.metric, trial, control: control!, treatment: treatment!, effect: effect!, low: low!, high: high!, points: m.points, scale: m.scale, unit: m.unit, ...(processes ? { processes } : {}) };
}

function decodeEvent(data: Readonly<Record<string, unknown>> | undefined): { trial: number; attempt: number; metrics: TrialMetric[] } | undefined {
  if (data?.version !== TRIAL_METRICS_VERSION || !Number.isInteger(data.trial) || !Number.isInteger(data.attempt) || !Array.isArray(data.metrics)) return undefined;
  const trial = data.trial as number;
  const metrics = data.metrics.map((m) => decodeMetric(m, trial));
  // One unreadable metric makes the whole event untrusted: the trial is recomputed from its outcomes.
  if (metrics.some((m) => m === undefined)) return undefined;
  return { trial, attempt: data.attempt as number, metrics: metrics as TrialMetric[] };
}
