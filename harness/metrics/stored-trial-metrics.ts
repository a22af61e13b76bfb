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
import { implausibility } from './stored-metric-check.js';

export const TRIAL_METRICS_EVENT = 'trial-metrics';
/** Raised when what a trial's metrics hold or how they are computed changes: older events are recomputed, not misread. */
const TRIAL_METRICS_VERSION = 1;
/** More metrics than a trial has (its fixed ones, an error share per class, a fan-out per dependency, what its arms export). */
const MAX_METRICS_PER_TRIAL = 10_000;

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
  return { index: trial.index, outcomes, samples, ...(dependencies ? { dependencies } : {}) };
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
  // Each event is checked (decodeEvent); one that fails, or two for one attempt that disagree, is named through
  // onCorrupt and its trial computed from its own outcomes: stored metrics are never judged unchecked.
  const stored = new Map<string, { metrics: TrialMetric[]; json: string } | 'untrusted'>();
  for (const event of await store.experiments.events(record.id, { ...options, types: [TRIAL_METRICS_EVENT] })) {
    const decoded = decodeEvent(event.data);
    if (decoded === undefined) continue;
    const where = `trial-metrics event of trial ${decoded.trial + 1} attempt ${decoded.attempt}`;
    const key = `${decoded.trial}/${decoded.attempt}`;
    if ('problem' in decoded) {
      options.onCorrupt?.(where, `${decoded.problem}; the trial is computed from its outcomes`);
      stored.set(key, 'untrusted');
      continue;
    }
    const before = stored.get(key);
    const json = JSON.stringify(event.data?.metrics);
    if (before === undefined) stored.set(key, { metrics: decoded.metrics, json });
    else if (before !== 'untrusted' && before.json !== json) {
      options.onCorrupt?.(where, 'stored twice, differently; the trial is computed from its outcomes');
      stored.set(key, 'untrusted');
    }
  }
  const metrics: TrialMetric[] = [];
  const recomputed: number[] = [];
  // Loops, not push(...list): a list of a hundred thousand would overflow the call stack.
  const append = (list: readonly TrialMetric[]): void => {
    for (const m of list) metrics.push(m);
  };
  for (const trial of used) {
    const found = stored.get(`${trial.index}/${trial.attempt}`);
    if (found !== undefined && found !== 'untrusted') {
      append(found.metrics);
      continue;
    }
    recomputed.push(trial.index);
    const data = await trialDataOf(store, record.id, trial, options);
    append(trialMetrics(data, { seed: record.seed, ...(options.resamples !== undefined ? { resamples: options.resamples } : {}) }));
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
  if (
    typeof m.metric !== 'string' ||
    m.trial !== trial ||
    typeof m.points !== 'number' ||
    (m.scale !== 'relative' && m.scale !== 'absolute') ||
    typeof m.unit !== 'string'
  )
    return undefined;
  let processes: ArmProcessValues | undefined;
  if (m.processes !== undefined) {
    const p = m.processes as Record<string, unknown> | null;
    const control = decodeNumbers(p?.control);
    const treatment = decodeNumbers(p?.treatment);
    if (!control || !treatment) return undefined;
    processes = { control, treatment };
  }
  const [control, treatment, effect, low, high] = numbers as number[];
  return {
    metric: m.metric,
    trial,
    control: control!,
    treatment: treatment!,
    effect: effect!,
    low: low!,
    high: high!,
    points: m.points,
    scale: m.scale,
    unit: m.unit,
    ...(processes ? { processes } : {}),
  };
}

/**
 * A stored event's metrics, checked: undefined for an event of another version or shape (recomputed without a word:
 * an older Tandem's), a problem for one that is this version's but not what Tandem computed.
 */
function decodeEvent(
  data: Readonly<Record<string, unknown>> | undefined,
): { trial: number; attempt: number; metrics: TrialMetric[] } | { trial: number; attempt: number; problem: string } | undefined {
  if (data?.version !== TRIAL_METRICS_VERSION || !Number.isInteger(data.trial) || !Number.isInteger(data.attempt)) return undefined;
  const trial = data.trial as number;
  const attempt = data.attempt as number;
  if (!Array.isArray(data.metrics)) return { trial, attempt, problem: 'its metrics are not a list' };
  if (data.metrics.length > MAX_METRICS_PER_TRIAL)
    return { trial, attempt, problem: `${data.metrics.length} metrics, more than the ${MAX_METRICS_PER_TRIAL} a trial can have` };
  const metrics: TrialMetric[] = [];
  const names = new Set<string>();
  for (const [i, value] of data.metrics.entries()) {
    const metric = decodeMetric(value, trial);
    if (!metric) return { trial, attempt, problem: `metric ${i + 1} is not a trial metric of trial ${trial + 1}` };
    const problem = implausibility(metric);
    if (problem !== undefined) return { trial, attempt, problem };
    if (names.has(metric.metric)) return { trial, attempt, problem: `metric ${JSON.stringify(metric.metric)} is stored more than once` };
    names.add(metric.metric);
    metrics.push(metric);
  }
  return { trial, attempt, metrics };
}
