/**
 * The harness end to end for one stored experiment: load its per-trial
 * metrics (stored as each trial completed), judge them (with the workload's
 * latest A/A calibration when there is one), summarize each arm from the
 * store's aggregates, compare responses trial by trial, run final checks,
 * and assemble the report model every renderer reads. The model's shape is the JSON report
 * (docs/reports.md documents it); renderers add nothing to it.
 */
import { type ExperimentEvent, type ExperimentRecord, type WorkloadConfig } from '../../core/index.js';
import { schemaFromDescriptorSet, type GrpcSchema } from '../../net/index.js';
import type { RequestOutcome } from '../../core/index.js';
import type { ReadOptions, Store } from '../../store/index.js';

export type { ArmSummary } from '../metrics/arm-summary.js';
import type { Calibration } from '../judge/calibration-result.js';
import { configuredFinalChecks, runFinalChecks, type CheckSet, type FinalCheckResult } from './checks.js';
import { compareResponseStream, type ResponseComparison } from '../compare/compare-responses.js';
import { armDistributions, type ArmSummary } from '../metrics/arm-summary.js';
import { deployedArmsOf, loadExperimentData, missingDataCauses, type ExcludedTrial, type ExperimentData } from '../metrics/experiment-data.js';
import { metricPolicies } from '../metrics/metric-policy.js';
import type { TrialMetric } from '../metrics/trial-metrics.js';
import { judge, type ExperimentVerdict, type JudgeOptions, type MetricVerdict, type OnInconclusive } from '../judge/verdict.js';
import { contendedTrialsNote, slowedTrialsNote } from '../metrics/contention-note.js';

export const REPORT_SCHEMA = 'tandem.report/v1';

export interface ExperimentReport {
  readonly schema: typeof REPORT_SCHEMA;
  readonly generatedAt: string;
  readonly experiment: {
    readonly id: string;
    readonly workload: string;
    readonly status: string;
    readonly seed: number;
    readonly createdAt: string;
    readonly updatedAt: string;
    readonly reason?: string;
    readonly spec: Readonly<Record<string, unknown>>;
  };
  /** The judge's verdict (its metrics are below), with final checks applied to the outcome and reasons. */
  readonly verdict: Omit<ExperimentVerdict, 'metrics'>;
  readonly metrics: readonly MetricVerdict[];
  /** Per-trial effects of the judged metrics, with their within-trial intervals. */
  /** Per-trial effects of the judged metrics, with each arm's processes' own values when the arms ran several. */
  readonly perTrial: readonly Pick<TrialMetric, 'metric' | 'trial' | 'control' | 'treatment' | 'effect' | 'low' | 'high' | 'processes'>[];
  /** Every attempt; `otherWorkOnArmCpus`: the share of the pinned arms' CPUs other work took in its window (replayer/arm-cpu-contention.ts). */
  readonly trials: readonly {
    readonly index: number;
    readonly attempt: number;
    readonly status: string;
    readonly reason?: string;
    readonly slots?: unknown;
    readonly achievedRate?: number;
    readonly targetRate?: number;
    readonly otherWorkOnArmCpus?: number;
    readonly prewarmSent?: number;
    readonly prewarmErrors?: number;
  }[];
  readonly excludedTrials: readonly ExcludedTrial[];
  readonly arms: Readonly<Record<'control' | 'treatment', ArmSummary>>;
  /** Latency quantiles per arm, [ms, quantile], at most 101 points each. */
  readonly latencyCdf: Readonly<Record<'control' | 'treatment', readonly (readonly [number, number])[]>>;
  readonly detectors: readonly {
    readonly name: string;
    readonly observations: readonly { readonly timeMs: number; readonly value: number | null; readonly verdict: string; readonly message?: string }[];
  }[];
  readonly cancellation?: { readonly detector: string; readonly reason: string; readonly firstViolationMs: number; readonly terminatedMs: number };
  /**
   * Set when the experiment was cancelled, or failed before reaching a verdict: then there is no verdict
   * (outcome `no data`, no metric judged, no final check run) — what its trials measured is shown, not judged.
   */
  readonly stopped?: { readonly status: 'cancelled' | 'failed'; readonly reason: string; readonly trialsMeasured: number };
  /** Router counters per dependency and arm, summed over the trials used. */
  /**
   * Guardrail evidence per dependency and arm, over every trial attempt that sent traffic (cancelled and
   * replaced ones included): calls, errors, writes blocked, calls refused (undeclared target, unsafe
   * path), calls per target, and calls per replayed request — null when the service does not forward
   * the record id (`x-tandem-record`), so fan-out cannot be attributed.
   */
  readonly fanout: readonly {
    readonly dependency: string;
    readonly arm: string;
    readonly policy: string;
    readonly calls: number;
    readonly errors: number;
    readonly blocked: number;
    readonly refused?: number;
    readonly byTarget?: Readonly<Record<string, number>>;
    readonly fanOut: number | null;
  }[];
  readonly comparison?: ResponseComparison;
  readonly finalChecks: readonly FinalCheckResult[];
  readonly calibration?: { readonly experimentId: string; readonly createdAt: string; readonly trials: number; readonly falsePositiveRate: number };
  readonly notes: readonly string[];
}

export interface EvaluateOptions {
  readonly workload: WorkloadConfig;
  /** What an undecided experiment becomes; default: the run's (stored in its spec), else the workload's. */
  readonly onInconclusive?: OnInconclusive;
  readonly calibration?: Calibration;
  readonly checks?: CheckSet;
  /** Recorded request bodies by record id, for ranking labels. */
  readonly requestBodies?: ReadonlyMap<string, string>;
  /** Descriptors for decoding gRPC responses (`harness.responses.grpc`, loaded by loadGrpcSchema). */
  readonly grpcSchema?: GrpcSchema;
  readonly signal?: AbortSignal;
  readonly now?: () => number;
}

/** The design an experiment ran under: stored in its spec by the executor, else the workload's. */
export function designOf(spec: Readonly<Record<string, unknown>>, workload: WorkloadConfig): { minTrials: number; maxTrials: number } {
  const stored = spec.design as { minTrials?: unknown; maxTrials?: unknown } | undefined;
  if (typeof stored?.minTrials === 'number' && typeof stored.maxTrials === 'number') return { minTrials: stored.minTrials, maxTrials: stored.maxTrials };
  return { minTrials: workload.trials.min, maxTrials: workload.trials.max };
}

function onInconclusiveOf(spec: Readonly<Record<string, unknown>>): OnInconclusive | undefined {
  const value = spec.onInconclusive;
  return value === 'pass' || value === 'fail' || value === 'inconclusive' ? value : undefined;
}

/** How a stored experiment is judged: the same for every look while it runs and for its report. */
function judgeOptionsFor(data: ExperimentData, options: EvaluateOptions): JudgeOptions {
  const { record } = data;
  return {
    policies: metricPolicies(options.workload.checks, { deployedArms: deployedArmsOf(data.slotSigns) }),
    alpha: options.workload.harness.alpha,
    minPoints: options.workload.harness.minPoints,
    slotSigns: data.slotSigns,
    design: designOf(record.spec, options.workload),
    onInconclusive: options.onInconclusive ?? onInconclusiveOf(record.spec) ?? options.workload.harness.onInconclusive,
    noDataCauses: missingDataCauses(data),
    ...(options.calibration ? { calibration: options.calibration } : {}),
  };
}

/** One sequential look at a running experiment: its completed trials judged, without comparison or report. */
export async function lookAtExperiment(
  store: Pick<Store, 'experiments' | 'outcomes' | 'samples'>,
  experimentId: string,
  options: EvaluateOptions,
): Promise<ExperimentVerdict> {
  // Stored per-trial metrics: a look reads no outcomes (a trial without them is computed alone, without intervals).
  const data = await loadExperimentData(store, experimentId, { ...(options.signal ? { signal: options.signal } : {}), resamples: 0 });
  return judge(data.metrics, judgeOptionsFor(data, options));
}

/** The outcomes the response comparison reads: the judged attempts' (every arm, control′ too), one trial's file or query at a time. */
async function* comparedOutcomes(store: Pick<Store, 'outcomes'>, data: ExperimentData, options: ReadOptions): AsyncGenerator<RequestOutcome> {
  // In trial order: the comparer compares a trial once a later one starts, so it holds one trial at a time.
  for (const trial of [...data.used].sort((a, b) => a.index - b.index)) {
    for await (const o of store.outcomes.read(data.record.id, { ...options, trial: trial.index })) if (o.attempt === trial.attempt) yield o;
  }
}

/**
 * A cancelled experiment, or one that failed with a verdict still to reach (not one that ended for lack of
 * data, whose verdict `no data` is its own): its data is partial and must never read as decided.
 */
function stoppedBeforeVerdict(record: ExperimentRecord, trialsMeasured: number): ExperimentReport['stopped'] {
  if (record.status === 'cancelled') return { status: 'cancelled', reason: plainReason(record.reason, 'cancelled') ?? 'no reason recorded', trialsMeasured };
  if (record.status === 'failed' && record.verdict?.outcome !== 'no data')
    return { status: 'failed', reason: plainReason(record.reason, 'failed') ?? 'no reason recorded', trialsMeasured };
  return undefined;
}

/** A stored reason without a leading "cancelled: " (said once by whoever shows the status). */
function plainReason(reason: string | undefined, status: string): string | undefined {
  return reason?.replace(new RegExp(`^${status}:\\s*`), '');
}

/** The descriptors the control arm gave by server reflection during the experiment (executor/replay-experiment.ts), when it gave any. */
function reflectedSchema(events: readonly ExperimentEvent[]): GrpcSchema | undefined {
  const event = events.find((e) => e.type === 'grpc-descriptors' && typeof e.data?.descriptorSet === 'string');
  if (event === undefined) return undefined;
  try {
    return schemaFromDescriptorSet(Buffer.from(event.data!.descriptorSet as string, 'base64'), 'the control arm (server reflection)');
  } catch {
    return undefined; // stored data, not trusted: without descriptors the responses are counted as not compared
  }
}

const withGrpcSchema = (schema: GrpcSchema | undefined): { grpcSchema?: GrpcSchema } => (schema ? { grpcSchema: schema } : {});

/** The report model of one stored experiment. */
export async function evaluateExperiment(
  store: Pick<Store, 'experiments' | 'outcomes' | 'samples' | 'observations'>,
  experimentId: string,
  options: EvaluateOptions,
): Promise<ExperimentReport> {
  const now = options.now ?? Date.now;
  const data = await loadExperimentData(store, experimentId, options.signal ? { signal: options.signal } : {});
  const { record, metrics } = data;
  const corrupt = [...data.corrupt];
  const readOptions: ReadOptions = { ...(options.signal ? { signal: options.signal } : {}), onCorrupt: (where, reason) => corrupt.push(`${where}: ${reason}`) };
  const verdict = judge(metrics, judgeOptionsFor(data, options));
  const events = await store.experiments.events(experimentId, { ...readOptions, types: ['cancelled-by-monitor', 'grpc-descriptors'] });
  const observations = await store.observations.read(experimentId, readOptions);
  const responses = options.workload.harness.responses;
  const comparison = responses
    ? await compareResponseStream(comparedOutcomes(store, data, readOptions), {
        config: responses,
        ...(options.requestBodies ? { requestBodies: options.requestBodies } : {}),
        ...withGrpcSchema(options.grpcSchema ?? reflectedSchema(events)),
      })
    : undefined;
  const stopped = stoppedBeforeVerdict(record, verdict.trials);
  // A stopped experiment's partial data is not judged: no final check runs over it either.
  const finalChecks = stopped
    ? []
    : await runFinalChecks([...configuredFinalChecks(responses), ...(options.checks?.final ?? [])], {
        experimentId,
        verdict,
        ...(comparison ? { comparison } : {}),
      });
  let { outcome } = verdict;
  const reasons = [...verdict.reasons];
  const failedChecks = finalChecks.filter((c) => !c.ok);
  for (const c of failedChecks) reasons.push(`final check ${c.name} failed: ${c.message}`);
  if (failedChecks.length > 0) outcome = 'regressed';
  if (stopped) {
    outcome = 'no data';
    reasons.splice(
      0,
      reasons.length,
      `${stopped.status} (${stopped.reason}): no verdict; what ${stopped.trialsMeasured} trial(s) measured before it stopped is shown, not judged`,
    );
  }

  const distributions = await armDistributions(store, experimentId, data.used, readOptions);
  const detectorNames = [...new Set(observations.map((o) => o.detector))];
  const cancellationEvent = events.find((e) => e.type === 'cancelled-by-monitor');
  const fanout = new Map<
    string,
    {
      dependency: string;
      arm: string;
      policy: string;
      calls: number;
      errors: number;
      blocked: number;
      refused: number;
      byTarget: Record<string, number>;
      requests: number;
    }
  >();
  // Every attempt, not only the judged trials: the proof that a cancelled experiment touched only its pinned shard is in them.
  for (const t of data.record.trials) {
    for (const d of t.details?.dependencies ?? []) {
      const key = `${d.dependency}/${d.arm}`;
      const entry = fanout.get(key) ?? {
        dependency: d.dependency,
        arm: d.arm,
        policy: d.policy,
        calls: 0,
        errors: 0,
        blocked: 0,
        refused: 0,
        byTarget: {},
        requests: 0,
      };
      entry.calls += d.calls;
      entry.errors += d.errors;
      entry.blocked += d.blocked;
      entry.refused += d.refused ?? 0;
      for (const [target, calls] of Object.entries(d.byTarget ?? {})) entry.byTarget[target] = (entry.byTarget[target] ?? 0) + calls;
      entry.requests += d.replayedRequests;
      fanout.set(key, entry);
    }
  }
  const notes = [
    ...corrupt.map((c) => `stored data not used: ${c}`),
    ...data.record.trials.flatMap((t) =>
      t.details?.unreadable ? [`stored data not used: trial ${t.index + 1} attempt ${t.attempt}'s details: ${t.details.unreadable.join('; ')}`] : [],
    ),
  ];
  if (responses && !comparison?.noiseCancellation) {
    notes.push(
      options.workload.arms?.controlPrime
        ? 'control′ is configured but answered no compared pair (unreachable, or over its concurrency): response differences are not noise-cancelled'
        : 'no control′ arm: response differences are not noise-cancelled (set arms.controlPrime to enable it)',
    );
  }
  for (const note of [contendedTrialsNote(data.used), slowedTrialsNote(metrics)]) if (note) notes.push(note);
  const judgedNames = new Set(verdict.metrics.filter((m) => m.judged).map((m) => m.metric));
  return {
    schema: REPORT_SCHEMA,
    generatedAt: new Date(now()).toISOString(),
    experiment: {
      id: record.id,
      workload: record.workload,
      status: record.status,
      seed: record.seed,
      createdAt: new Date(record.createdAtMs).toISOString(),
      updatedAt: new Date(record.updatedAtMs).toISOString(),
      ...(record.reason ? { reason: record.reason } : {}),
      spec: record.spec,
    },
    verdict: {
      outcome,
      reasons,
      alpha: verdict.alpha,
      trials: verdict.trials,
      design: verdict.design,
      decided: stopped ? false : verdict.decided,
      undecided: stopped ? [] : verdict.undecided,
      ...(verdict.inconclusivePolicy && !stopped ? { inconclusivePolicy: verdict.inconclusivePolicy } : {}),
      ...(verdict.familySize !== undefined && !stopped ? { familySize: verdict.familySize } : {}),
    },
    metrics: stopped
      ? verdict.metrics.map((m) =>
          m.judged
            ? {
                ...m,
                decided: false,
                verdict: 'no data' as const,
                reason: `not judged: the experiment ${stopped.status} after ${stopped.trialsMeasured} trial(s)`,
              }
            : m,
        )
      : verdict.metrics,
    perTrial: metrics
      .filter((m) => judgedNames.has(m.metric))
      .map(({ metric, trial, control: c, treatment: t, effect, low, high, processes }) => ({
        metric,
        trial,
        control: c,
        treatment: t,
        effect,
        low,
        high,
        ...(processes ? { processes } : {}),
      })),
    trials: record.trials.map((t) => ({
      index: t.index,
      attempt: t.attempt,
      status: t.status,
      ...(t.reason ? { reason: t.reason } : {}),
      ...(t.details?.slots ? { slots: t.details.slots } : {}),
      ...(typeof t.details?.achievedRate === 'number' ? { achievedRate: t.details.achievedRate } : {}),
      ...(typeof t.details?.targetRate === 'number' ? { targetRate: t.details.targetRate } : {}),
      ...(typeof t.details?.otherWorkOnArmCpus === 'number' ? { otherWorkOnArmCpus: t.details.otherWorkOnArmCpus } : {}),
      ...(t.details?.prewarm ? { prewarmSent: t.details.prewarm.sent, prewarmErrors: t.details.prewarm.errors } : {}),
    })),
    excludedTrials: data.excluded,
    arms: distributions.arms,
    latencyCdf: distributions.latencyCdf,
    detectors: detectorNames.map((name) => ({
      name,
      observations: observations
        .filter((o) => o.detector === name)
        .map((o) => ({ timeMs: o.timeMs, value: o.value, verdict: o.verdict, ...(o.message ? { message: o.message } : {}) })),
    })),
    ...(cancellationEvent?.data ? { cancellation: cancellationEvent.data as ExperimentReport['cancellation'] & object } : {}),
    ...(stopped ? { stopped } : {}),
    fanout: [...fanout.values()].map(({ requests, ...rest }) => ({ ...rest, fanOut: requests > 0 ? rest.calls / requests : rest.calls > 0 ? null : 0 })),
    ...(comparison ? { comparison } : {}),
    finalChecks,
    ...(options.calibration
      ? {
          calibration: {
            experimentId: options.calibration.experimentId,
            createdAt: new Date(options.calibration.createdAtMs).toISOString(),
            trials: options.calibration.trials,
            falsePositiveRate: options.calibration.falsePositiveRate,
          },
        }
      : {}),
    notes,
  };
}
