/**
 * Per-trial metrics of both arms and the trial's paired effect. A trial is
 * the unit of inference, so everything here reduces one trial's outcomes
 * and scraped samples to one value per arm and one effect per metric; the
 * verdict then works across trials. Latency effects come from the records
 * both arms answered (the same request, sent at the same intended time).
 */
import { quantileSorted } from 'simple-statistics';
import type { RequestOutcome, Sample } from '../../core/index.js';
import { bootstrapInterval, meanInterval, quantileInPlace } from '../stats.js';

/** How an effect is expressed: relative change (treatment / control − 1) or absolute difference. */
export type EffectScale = 'relative' | 'absolute';

/** The built-in metrics, judged in every experiment unless a check says otherwise. */
export const BUILT_IN_METRICS = [
  'latency_shift',
  'latency_mean',
  'latency_p50',
  'latency_p90',
  'latency_p99',
  'error_share',
  'bytes_mean',
  'cpu_per_request',
  'rss_bytes',
] as const;

export interface TrialMetric {
  readonly metric: string;
  readonly trial: number;
  readonly control: number;
  readonly treatment: number;
  /** Paired effect of this trial on the metric's scale; NaN when undefined (e.g. a zero control value on a relative scale). */
  readonly effect: number;
  /** 95% interval of this trial's effect (diagnostic: requests inside a trial are not independent of each other's drift). */
  readonly low: number;
  readonly high: number;
  /** Data points behind the trial's value: paired records or scraped samples. */
  readonly points: number;
  readonly scale: EffectScale;
  readonly unit: string;
  /**
   * Each arm's processes' own values when the arm ran several (CPU per request, RSS; for latency_shift each
   * process's level relative to its arm's mean): a slow process is visible as one.
   */
  readonly processes?: ArmProcessValues;
}

/** One trial's inputs, as loaded from the store. */
export interface TrialData {
  readonly index: number;
  readonly outcomes: readonly RequestOutcome[];
  readonly samples: readonly Sample[];
  /** The router's counters of this trial (`details.dependencies` of the trial record). */
  readonly dependencies?: readonly { arm: string; dependency: string; calls: number; replayedRequests: number }[];
}

export interface TrialMetricsOptions {
  /** Seed of the per-trial bootstrap intervals. */
  readonly seed: number;
  /** Bootstrap resamples for quantile intervals; 0 skips them (judging needs only the effects). @default 200 */
  readonly resamples?: number;
}

const average = (values: readonly number[]): number => (values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length);
const relative = (control: number, treatment: number): number => (control === 0 ? (treatment === 0 ? 0 : Number.NaN) : treatment / control - 1);

interface Pair {
  readonly control: RequestOutcome;
  readonly treatment: RequestOutcome;
}

/** Both arms' answers to each record; with several processes per arm, lane i pairs the arms' i-th processes. */
function pairsOf(outcomes: readonly RequestOutcome[]): Pair[] {
  const key = (o: RequestOutcome): string => (o.process === undefined ? o.recordId : `${o.recordId}\u0000${o.process}`);
  const control = new Map<string, RequestOutcome>();
  for (const o of outcomes) if (o.arm === 'control') control.set(key(o), o);
  const pairs: Pair[] = [];
  for (const o of outcomes) {
    if (o.arm !== 'treatment') continue;
    const c = control.get(key(o));
    if (c) pairs.push({ control: c, treatment: o });
  }
  return pairs;
}

const sortedQuantile = (values: ArrayLike<number>, q: number): number => (values.length === 0 ? Number.NaN : quantileSorted(values as number[], q));

/**
 * One arm's latencies, sorted. A Float64Array sorts numerically without a comparator callback, several
 * times faster than Array#sort: the bootstrap sorts 2 × 200 resamples per quantile and trial, which was
 * most of the time a report took (a dashboard page, `tandem report`). Same values, same order.
 */
function sortedLatencies(pairs: readonly Pair[], arm: 'control' | 'treatment'): Float64Array {
  const values = new Float64Array(pairs.length);
  for (let i = 0; i < pairs.length; i++) values[i] = pairs[i]![arm].latencyMs;
  return values.sort();
}

function quantileRatio(pairs: readonly Pair[], q: number): number {
  return relative(sortedQuantile(sortedLatencies(pairs, 'control'), q), sortedQuantile(sortedLatencies(pairs, 'treatment'), q));
}

/**
 * The bootstrap interval of quantileRatio, resampling pair indexes into two reused buffers rather than
 * arrays of pair objects, each quantile found by selection rather than a sort: the same random draws and
 * the same quantiles, so the same interval, in a fraction of the time.
 */
function quantileRatioInterval(pairs: readonly Pair[], q: number, options: { seed: number; resamples: number }): { low: number; high: number } {
  const control = Float64Array.from(pairs, (p) => p.control.latencyMs);
  const treatment = Float64Array.from(pairs, (p) => p.treatment.latencyMs);
  const c = new Float64Array(pairs.length);
  const t = new Float64Array(pairs.length);
  const indexes = Array.from(pairs, (_, i) => i);
  return bootstrapInterval(
    indexes,
    (sample) => {
      for (let i = 0; i < sample.length; i++) {
        c[i] = control[sample[i]!]!;
        t[i] = treatment[sample[i]!]!;
      }
      return relative(quantileInPlace(c, q), quantileInPlace(t, q));
    },
    options,
  );
}

/**
 * Scraped series summed over label sets per scrape, per process of each arm, then over the arm's processes:
 * counters become rates, gauges means (an arm of k processes serves the same load as one of one).
 */
function scrapedMetrics(
  samples: readonly Sample[],
  windowStartMs: number,
  windowEndMs: number,
): Map<string, Record<'control' | 'treatment', { value: number; points: number }>> {
  // name -> arm -> process -> timeMs -> summed value
  const series = new Map<string, Map<string, Map<number, Map<number, number>>>>();
  for (const s of samples) {
    if (s.timeMs < windowStartMs || s.timeMs > windowEndMs) continue;
    if (s.arm !== 'control' && s.arm !== 'treatment') continue;
    // Histogram buckets and summary quantiles do not add up across label sets; the process's own CPU and
    // memory are measured once per trial (processMetrics).
    if (
      s.metric === 'process_cpu_seconds' ||
      s.metric === 'process_rss_bytes' ||
      s.metric.endsWith('_bucket') ||
      s.metric.endsWith('_created') ||
      s.labels?.quantile !== undefined ||
      s.labels?.le !== undefined
    )
      continue;
    let byArm = series.get(s.metric);
    if (!byArm) series.set(s.metric, (byArm = new Map()));
    let byProcess = byArm.get(s.arm);
    if (!byProcess) byArm.set(s.arm, (byProcess = new Map()));
    const process = processOfSample(s);
    let byTime = byProcess.get(process);
    if (!byTime) byProcess.set(process, (byTime = new Map()));
    byTime.set(s.timeMs, (byTime.get(s.timeMs) ?? 0) + s.value);
  }
  const result = new Map<string, Record<'control' | 'treatment', { value: number; points: number }>>();
  for (const [name, byArm] of series) {
    const isCounter = /_(total|count|sum)$/.test(name);
    const processValue = (byTime: Map<number, number>): { value: number; points: number } => {
      const points = [...byTime.entries()].sort((a, b) => a[0] - b[0]);
      if (points.length < 2) return { value: Number.NaN, points: points.length };
      if (!isCounter) return { value: points.reduce((sum, [, v]) => sum + v, 0) / points.length, points: points.length };
      const [firstMs, first] = points[0]!;
      const [lastMs, last] = points[points.length - 1]!;
      // A counter that went down restarted: its rate over this window is unknown.
      return { value: last < first ? Number.NaN : ((last - first) * 1000) / (lastMs - firstMs), points: points.length };
    };
    const armValue = (arm: 'control' | 'treatment'): { value: number; points: number } => {
      const processes = [...(byArm.get(arm) ?? new Map<number, Map<number, number>>()).values()].map(processValue);
      if (processes.length === 0) return { value: Number.NaN, points: 0 };
      return { value: processes.reduce((sum, p) => sum + p.value, 0), points: processes.reduce((sum, p) => sum + p.points, 0) };
    };
    result.set(name, { control: armValue('control'), treatment: armValue('treatment') });
  }
  return result;
}

/** Which of an arm's processes a sample or an outcome belongs to: 0 when the arm runs one (or an older Tandem wrote it). */
export const processOfSample = (s: Sample): number => {
  const label = s.labels?.tandem_process;
  const index = label === undefined ? 0 : Number(label);
  // A hand-edited or foreign label is not a process of ours: counted with the first.
  return Number.isInteger(index) && index >= 0 && index < 1_000 ? index : 0;
};
const processOfOutcome = (o: RequestOutcome): number => o.process ?? 0;

/**
 * The arm's value from its processes' values: their mean, what a fleet of such processes pays per request. Fresh
 * processes of one build are not alike (some slow for their whole life: address layout; Mytkowicz et al. 2009,
 * Curtsinger & Berger 2013), and a change that makes slow processes more common, or their spread wider, costs the
 * fleet although its fastest process is unchanged: the fastest process, judged until 2026-12-07, hid exactly that
 * (docs/design/judge.md §1). The spread a process lottery adds to the trials is what the judge's robust looks and
 * their sign flips are for; each process's own value stays in the report, so a slow one is still seen as one.
 */
export function fleetMeanOf(values: readonly number[]): number {
  return average(values.filter(Number.isFinite));
}

export interface ArmProcessValues {
  readonly control: readonly number[];
  readonly treatment: readonly number[];
}

/**
 * Each deployed arm's processes, measured outside them: CPU seconds per answered request over the measurement
 * window and the mean RSS, per process; the arm's CPU and RSS are their processes' mean (`fleetMeanOf`). The CPU delta is read at the
 * window's start and after its last response (samples marked `measure-start`/`measure-end`) and divided by the
 * requests that process answered in the window; without the marks (older records), between the first and last
 * interval scrape inside the window, divided by the requests sent between them.
 */
function processMetrics(
  samples: readonly Sample[],
  outcomes: readonly RequestOutcome[],
  windowStartMs: number,
  windowEndMs: number,
): { cpu: ArmProcessValues; rss: ArmProcessValues } | undefined {
  const perProcess = (arm: 'control' | 'treatment', process: number): { cpu: number; rss: number } | undefined => {
    const mine = (s: Sample): boolean => s.arm === arm && processOfSample(s) === process;
    const answeredBy = (o: RequestOutcome): boolean => o.arm === arm && o.status > 0 && processOfOutcome(o) === process;
    const armCpu = samples.filter((s) => mine(s) && s.metric === 'process_cpu_seconds');
    const rss = samples.filter((s) => mine(s) && s.metric === 'process_rss_bytes' && s.timeMs >= windowStartMs && s.timeMs <= windowEndMs);
    const rssMean = rss.length > 0 ? rss.reduce((sum, s) => sum + s.value, 0) / rss.length : Number.NaN;
    const start = armCpu.find((s) => s.labels?.mark === 'measure-start');
    const end = armCpu.find((s) => s.labels?.mark === 'measure-end');
    if (start && end) {
      const answered = outcomes.filter(answeredBy).length;
      return { cpu: answered > 0 && end.value >= start.value ? (end.value - start.value) / answered : Number.NaN, rss: rssMean };
    }
    const cpu = armCpu.filter((s) => s.labels?.mark === undefined && s.timeMs >= windowStartMs && s.timeMs <= windowEndMs).sort((a, b) => a.timeMs - b.timeMs);
    if (cpu.length < 2) return undefined;
    const first = cpu[0]!;
    const last = cpu[cpu.length - 1]!;
    const answered = outcomes.filter((o) => answeredBy(o) && o.intendedMs >= first.timeMs && o.intendedMs < last.timeMs).length;
    return { cpu: answered > 0 && last.value >= first.value ? (last.value - first.value) / answered : Number.NaN, rss: rssMean };
  };
  const perArm = (arm: 'control' | 'treatment'): { cpu: number[]; rss: number[] } | undefined => {
    const processes = [...new Set(samples.filter((s) => s.arm === arm && s.metric === 'process_cpu_seconds').map(processOfSample))].sort((a, b) => a - b);
    const values = processes.map((p) => perProcess(arm, p)).filter((v) => v !== undefined);
    if (values.length === 0) return undefined;
    return { cpu: values.map((v) => v.cpu), rss: values.map((v) => v.rss) };
  };
  const control = perArm('control');
  const treatment = perArm('treatment');
  if (!control || !treatment) return undefined;
  return { cpu: { control: control.cpu, treatment: treatment.cpu }, rss: { control: control.rss, treatment: treatment.rss } };
}

/**
 * The trial's latency shift on the log scale when each arm ran several processes, all of them on the same
 * records: each answer's log latency less its record's mean over every process of both arms leaves the
 * process's own level (the record's cost cancels); the shift is between the arms' mean levels (`fleetMeanOf`, for
 * the reason given there), each the log of the mean of its processes' ratios to the record's level. Also returns each process's level relative to its arm's mean,
 * for the report. Undefined with one process per arm.
 */
function processLatencyShift(outcomes: readonly RequestOutcome[]): { shift: number; levels: ArmProcessValues } | undefined {
  const byRecord = new Map<string, RequestOutcome[]>();
  for (const o of outcomes) {
    if (o.process === undefined || !(o.latencyMs > 0) || o.errorClass !== '' || (o.arm !== 'control' && o.arm !== 'treatment')) continue;
    const list = byRecord.get(o.recordId) ?? [];
    list.push(o);
    byRecord.set(o.recordId, list);
  }
  const levels = { control: new Map<number, { sum: number; count: number }>(), treatment: new Map<number, { sum: number; count: number }>() };
  for (const answers of byRecord.values()) {
    if (!answers.some((o) => o.arm === 'control') || !answers.some((o) => o.arm === 'treatment')) continue;
    const mean = answers.reduce((sum, o) => sum + Math.log(o.latencyMs), 0) / answers.length;
    for (const o of answers) {
      const level = levels[o.arm as 'control' | 'treatment'];
      const entry = level.get(o.process!) ?? { sum: 0, count: 0 };
      entry.sum += Math.log(o.latencyMs) - mean;
      entry.count++;
      level.set(o.process!, entry);
    }
  }
  if (levels.control.size < 2 && levels.treatment.size < 2) return undefined;
  if (levels.control.size === 0 || levels.treatment.size === 0) return undefined;
  const values = (arm: 'control' | 'treatment'): number[] => [...levels[arm].entries()].sort((a, b) => a[0] - b[0]).map(([, e]) => e.sum / e.count);
  const control = values('control');
  const treatment = values('treatment');
  const relativeToMean = (list: number[]): number[] => list.map((v) => Math.expm1(v - average(list)));
  const fleetLevel = (list: number[]): number => Math.log(fleetMeanOf(list.map(Math.exp)));
  return { shift: fleetLevel(treatment) - fleetLevel(control), levels: { control: relativeToMean(control), treatment: relativeToMean(treatment) } };
}

/** Every metric of one trial: the built-ins, each error class, each scraped series name, and fan-out per dependency. */
export function trialMetrics(trial: TrialData, options: TrialMetricsOptions): TrialMetric[] {
  const pairs = pairsOf(trial.outcomes);
  const metrics: TrialMetric[] = [];
  const seed = (options.seed + trial.index * 7_919) >>> 0;
  const resamples = options.resamples ?? 200;
  const add = (
    metric: string,
    control: number,
    treatment: number,
    effect: number,
    interval: { low: number; high: number },
    points: number,
    scale: EffectScale,
    unit: string,
    processes?: ArmProcessValues,
  ): void => {
    metrics.push({
      metric,
      trial: trial.index,
      control,
      treatment,
      effect,
      low: interval.low,
      high: interval.high,
      points,
      scale,
      unit,
      ...(processes ? { processes } : {}),
    });
  };
  const noInterval = { low: Number.NaN, high: Number.NaN };

  if (pairs.length > 0) {
    const controlMean = pairs.reduce((s, p) => s + p.control.latencyMs, 0) / pairs.length;
    const differences = pairs.map((p) => p.treatment.latencyMs - p.control.latencyMs);
    const diff = meanInterval(differences);
    add(
      'latency_mean',
      controlMean,
      controlMean + diff.estimate,
      relative(controlMean, controlMean + diff.estimate),
      { low: diff.low / controlMean, high: diff.high / controlMean },
      pairs.length,
      'relative',
      'ms',
    );
    // The typical request's latency change: the geometric mean of per-record ratios. Pairing cancels each
    // record's own cost, and the log scale keeps a few expensive records from dominating the trial's noise.
    const logRatios = pairs
      .filter((p) => p.control.latencyMs > 0 && p.treatment.latencyMs > 0)
      .map((p) => Math.log(p.treatment.latencyMs / p.control.latencyMs));
    if (logRatios.length > 0) {
      const shift = meanInterval(logRatios);
      const geometric = (arm: 'control' | 'treatment'): number =>
        Math.exp(pairs.reduce((s, p) => s + Math.log(Math.max(p[arm].latencyMs, 1e-9)), 0) / pairs.length);
      const byProcess = processLatencyShift(trial.outcomes);
      // Several processes per arm: the shift between the arms' mean levels (its interval stays the pooled one's width).
      const offset = byProcess ? byProcess.shift - shift.estimate : 0;
      add(
        'latency_shift',
        geometric('control'),
        geometric('treatment'),
        Math.expm1(shift.estimate + offset),
        { low: Math.expm1(shift.low + offset), high: Math.expm1(shift.high + offset) },
        logRatios.length,
        'relative',
        'ms',
        byProcess?.levels,
      );
    }
    for (const [metric, q] of [
      ['latency_p50', 0.5],
      ['latency_p90', 0.9],
      ['latency_p99', 0.99],
    ] as const) {
      const c = pairs.map((p) => p.control.latencyMs).sort((a, b) => a - b);
      const t = pairs.map((p) => p.treatment.latencyMs).sort((a, b) => a - b);
      const interval = resamples > 0 ? quantileRatioInterval(pairs, q, { seed: seed + Math.round(q * 100), resamples }) : noInterval;
      add(metric, sortedQuantile(c, q), sortedQuantile(t, q), quantileRatio(pairs, q), interval, pairs.length, 'relative', 'ms');
    }
    const share = (arm: 'control' | 'treatment', match: (o: RequestOutcome) => boolean): number => pairs.filter((p) => match(p[arm])).length / pairs.length;
    const errorInterval = (match: (o: RequestOutcome) => boolean) => {
      const d = meanInterval(pairs.map((p) => Number(match(p.treatment)) - Number(match(p.control))));
      return { low: d.low, high: d.high };
    };
    const anyError = (o: RequestOutcome): boolean => o.errorClass !== '';
    add(
      'error_share',
      share('control', anyError),
      share('treatment', anyError),
      share('treatment', anyError) - share('control', anyError),
      errorInterval(anyError),
      pairs.length,
      'absolute',
      'share',
    );
    const classes = new Set(pairs.flatMap((p) => [p.control.errorClass, p.treatment.errorClass]).filter((c) => c !== ''));
    for (const errorClass of [...classes].sort()) {
      const match = (o: RequestOutcome): boolean => o.errorClass === errorClass;
      add(
        `error_share:${errorClass}`,
        share('control', match),
        share('treatment', match),
        share('treatment', match) - share('control', match),
        errorInterval(match),
        pairs.length,
        'absolute',
        'share',
      );
    }
    const bytesControl = pairs.reduce((s, p) => s + p.control.bytes, 0) / pairs.length;
    const bytesTreatment = pairs.reduce((s, p) => s + p.treatment.bytes, 0) / pairs.length;
    add('bytes_mean', bytesControl, bytesTreatment, relative(bytesControl, bytesTreatment), noInterval, pairs.length, 'relative', 'bytes');
  }

  if (trial.outcomes.length > 0) {
    // A loop, not Math.min(...): spreading a trial of 100k pairs' 200k outcomes overflows the call stack.
    let first = Number.POSITIVE_INFINITY;
    let last = Number.NEGATIVE_INFINITY;
    for (const o of trial.outcomes) {
      first = Math.min(first, o.intendedMs);
      last = Math.max(last, o.intendedMs);
    }
    const start = first;
    // Scrapes run on an interval: the one just after the window's last send still belongs to it.
    const end = last + 1_500;
    for (const [name, arms] of scrapedMetrics(trial.samples, start, end)) {
      const unit = /_(total|count|sum)$/.test(name) ? 'per s' : 'value';
      add(
        name,
        arms.control.value,
        arms.treatment.value,
        relative(arms.control.value, arms.treatment.value),
        noInterval,
        arms.control.points + arms.treatment.points,
        'relative',
        unit,
      );
    }
    const process = processMetrics(trial.samples, trial.outcomes, start, end);
    if (process) {
      const several = process.cpu.control.length > 1 || process.cpu.treatment.length > 1;
      const cpu = { control: fleetMeanOf(process.cpu.control), treatment: fleetMeanOf(process.cpu.treatment) };
      const rss = { control: fleetMeanOf(process.rss.control), treatment: fleetMeanOf(process.rss.treatment) };
      add(
        'cpu_per_request',
        cpu.control,
        cpu.treatment,
        relative(cpu.control, cpu.treatment),
        noInterval,
        2,
        'relative',
        'cpu s/request',
        several ? process.cpu : undefined,
      );
      add('rss_bytes', rss.control, rss.treatment, relative(rss.control, rss.treatment), noInterval, 2, 'relative', 'bytes', several ? process.rss : undefined);
    }
  }

  const dependencies = new Map<string, Record<string, { calls: number; requests: number }>>();
  for (const d of trial.dependencies ?? []) {
    const entry = dependencies.get(d.dependency) ?? {};
    entry[d.arm] = { calls: d.calls, requests: d.replayedRequests };
    dependencies.set(d.dependency, entry);
  }
  for (const [dependency, arms] of dependencies) {
    // Fan-out as the router counts it: calls per distinct replayed request that caused calls (warm-up included).
    const perArm = (arm: 'control' | 'treatment'): number => {
      const counters = arms[arm];
      return counters && counters.requests > 0 ? counters.calls / counters.requests : Number.NaN;
    };
    const c = perArm('control');
    const t = perArm('treatment');
    add(`fanout:${dependency}`, c, t, relative(c, t), noInterval, (arms.control?.calls ?? 0) + (arms.treatment?.calls ?? 0), 'relative', 'calls/request');
  }
  return metrics;
}
