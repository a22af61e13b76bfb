/**
 * One experiment run as the executor performs it, from its stored record:
 * replay (arms, router, monitors, trials, with a sequential look after each
 * trial that stops the run once the verdict is decided) → harness verdict →
 * terminal status. Idempotent: a finished experiment is left alone, a running one (its
 * worker died) resumes with its completed trials. A failure of any step,
 * including the store, marks the experiment failed with the reason when the
 * store still takes writes; nothing already written is touched.
 */
import { hostname } from 'node:os';
import { ConfigError, ExperimentCancelledError, type Clock, type ExperimentRecord, type TandemConfig, type WorkloadConfig } from '../core/index.js';
import type { Store } from '../store/index.js';
import type { SharedSource } from '../guardrails/index.js';
import {
  calibrateStored,
  evaluateExperiment,
  joinSentences,
  loadChecksModule,
  loadGrpcSchema,
  lookAtExperiment,
  type Calibration,
  type OnInconclusive,
} from '../harness/index.js';
import type { ReplayProgress } from '../replayer/index.js';
import { armsFor, controlAgainstControl } from './experiment-arms.js';
import type { ExperimentRequest } from './experiment-request.js';
import { isTerminal, requestOf, transition } from './lifecycle.js';
import { replayExperiment } from './replay-experiment.js';
import type { LookSummary } from './look-summary.js';

export interface RunContext {
  readonly config: TandemConfig;
  readonly store: Store;
  readonly clock: Clock;
  readonly sharedSource: SharedSource;
  readonly cwd: string;
  /** Aborted to cancel the experiment (user cancel, shutdown). */
  readonly signal?: AbortSignal;
  readonly onProgress?: (trial: number, attempt: number, progress: ReplayProgress) => void;
  /** Who runs experiments here (host and pid), recorded with each running event. @default host:pid */
  readonly runner?: string;
  /** Each sequential look: the critical metrics' estimates and intervals after `trials` trials. */
  readonly onLook?: (look: LookSummary) => void;
}

/** A request's overrides of the workload: `trials` is a fixed horizon; min/max trials and budget shape the sequential run. */
export function applyOverrides(workload: WorkloadConfig, overrides: ExperimentRequest['overrides']): WorkloadConfig {
  if (!overrides) return workload;
  let { min, max } = workload.trials;
  if (overrides.trials !== undefined) min = max = overrides.trials;
  if (overrides.maxTrials !== undefined) max = overrides.maxTrials;
  if (overrides.minTrials !== undefined) min = overrides.minTrials;
  min = Math.min(min, max);
  return {
    ...workload,
    replay: { ...workload.replay, ...(overrides.rate !== undefined ? { rate: overrides.rate } : {}) },
    trials: {
      ...workload.trials,
      min,
      max,
      count: max,
      ...(overrides.budgetMs !== undefined ? { budget: overrides.budgetMs } : {}),
      ...(overrides.warmupMs !== undefined ? { warmup: overrides.warmupMs } : {}),
      ...(overrides.measureMs !== undefined ? { measure: overrides.measureMs } : {}),
    },
  };
}

/** The sequential look of a running experiment: judge its completed trials, store and show what was found. */
function sequentialLook(
  ctx: RunContext,
  options: { workload: WorkloadConfig; calibration: Calibration | undefined; onInconclusive: OnInconclusive },
): (id: string, completed: number) => Promise<boolean> {
  const startedMs = ctx.clock.now();
  return async (id, completed) => {
    const verdict = await lookAtExperiment(ctx.store, id, {
      workload: options.workload,
      onInconclusive: options.onInconclusive,
      ...(options.calibration ? { calibration: options.calibration } : {}),
      now: () => ctx.clock.now(),
    });
    const summary: LookSummary = {
      experimentId: id,
      trials: completed,
      decided: verdict.decided,
      outcome: verdict.outcome,
      metrics: verdict.metrics
        .filter((m) => m.judged && m.verdict !== 'no data')
        .map((m) => ({
          metric: m.metric,
          critical: m.policy?.critical ?? false,
          verdict: m.verdict,
          estimate: m.estimate,
          low: m.low,
          high: m.high,
          scale: m.scale,
          ...(m.policy ? { threshold: m.policy.threshold } : {}),
          ...(m.forecast ? { forecast: m.forecast } : {}),
        })),
      ...(completed > 0 ? { secondsPerTrial: Number(((ctx.clock.now() - startedMs) / 1000 / completed).toFixed(2)) } : {}),
    };
    await ctx.store.experiments.appendEvent({
      experimentId: id,
      timeMs: ctx.clock.now(),
      type: 'look',
      message: `after ${completed} trial(s): ${verdict.decided ? `decided (${verdict.outcome})` : 'undecided'}`,
      data: { ...summary },
    });
    ctx.onLook?.(summary);
    return verdict.decided;
  };
}

/** The newest completed A/A calibration of a workload. */
export async function latestCalibration(store: Pick<Store, 'experiments'>, workload: string): Promise<Calibration | undefined> {
  const calibrated = (records: readonly ExperimentRecord[]): Calibration | undefined =>
    records.find((r) => r.spec.kind === 'calibration' && r.status === 'completed' && r.verdict?.calibration !== undefined)?.verdict?.calibration as
      Calibration | undefined;
  const found = calibrated(await store.experiments.list({ workload, kind: 'calibration', status: 'completed', limit: 20 }));
  if (found) return found;
  // Rows stored before listings could filter on kind (ClickHouse rows of an older Tandem) have kind '': looked through as before.
  return calibrated(await store.experiments.list({ workload, kind: '', limit: 1000 }));
}

/** Run (or resume) the stored experiment `id` to a terminal status; returns the final record. */
export async function runExperiment(id: string, ctx: RunContext): Promise<ExperimentRecord> {
  const { store, clock } = ctx;
  let record = await store.experiments.get(id);
  if (!record) throw new ConfigError([`no experiment ${JSON.stringify(id)} in the store`], 'experiment');
  if (isTerminal(record.status)) return record;
  const request = requestOf(record);
  try {
    if (!request) throw new ConfigError([`experiment ${id} has no stored request: it was not submitted through the executor`], 'experiment');
    if (ctx.signal?.aborted) return await transition(store, record, 'cancelled', clock, {}, (ctx.signal.reason as Error | undefined)?.message ?? 'cancelled');
    if (request.kind === 'noop') {
      record = await transition(store, record, 'running', clock);
      await store.experiments.appendEvent({ experimentId: id, timeMs: clock.now(), type: 'runner', message: ctx.runner ?? `${hostname()}:${process.pid}` });
      return await transition(store, record, 'passed', clock, { verdict: { outcome: 'passed', noop: true } });
    }
    const configured = ctx.config.workloads.find((w) => w.name === request.workload);
    if (!configured) throw new ConfigError([`workload ${JSON.stringify(request.workload)} is not in the config of this worker`], 'experiment');
    const aa = request.kind === 'aa';
    const sameBuild = aa || request.sameBuild === true;
    const workload = applyOverrides(sameBuild ? controlAgainstControl(configured) : configured, request.overrides);
    const choice = sameBuild
      ? { control: request.control, treatment: request.control, controlRevision: request.controlRevision, treatmentRevision: request.controlRevision }
      : request;
    const checks = workload.harness.checksModule !== undefined ? await loadChecksModule(workload.harness.checksModule, ctx.cwd) : undefined;
    const grpcSchema = workload.harness.responses?.grpc !== undefined ? await loadGrpcSchema(workload.harness.responses.grpc, ctx.cwd) : undefined;
    const onInconclusive = request.onInconclusive ?? workload.harness.onInconclusive;
    const calibration = aa ? undefined : await latestCalibration(store, workload.name);
    const result = await replayExperiment({
      workload,
      store,
      clock,
      sharedSource: ctx.sharedSource,
      kind: aa ? 'calibration' : 'experiment',
      existing: record,
      judgedAfter: true,
      runner: ctx.runner ?? `${hostname()}:${process.pid}`,
      deployed: choice.control === undefined && workload.arms?.control.deploy !== undefined,
      arms: (router) => armsFor(workload, choice, router, clock),
      spec: { onInconclusive },
      // An A/A calibration runs all its trials; an experiment stops as soon as its verdict is decided.
      ...(aa ? {} : { afterTrial: sequentialLook(ctx, { workload, calibration, onInconclusive }) }),
      ...(checks?.during ? { duringChecks: checks.during } : {}),
      // control′ (Diffy's noise cancellation) joins every experiment that compares responses, not only `replay`.
      ...(!aa && workload.arms?.controlPrime?.url !== undefined ? { controlPrime: workload.arms.controlPrime.url.replace(/\/$/, '') } : {}),
      ...(request.treatmentHeaders ? { armHeaders: { treatment: request.treatmentHeaders } } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(ctx.onProgress ? { onProgress: ctx.onProgress } : {}),
    });
    record = result.record;
    if (result.status !== 'completed') return record;
    if (aa) {
      const { record: stored, calibration } = await calibrateStored(store, id, { workload: configured, createdAtMs: clock.now() });
      return await transition(store, stored, 'completed', clock, { verdict: { calibration } });
    }
    const report = await evaluateExperiment(store, id, {
      workload,
      onInconclusive,
      ...(calibration ? { calibration } : {}),
      ...(checks ? { checks } : {}),
      ...(grpcSchema ? { grpcSchema } : {}),
      now: () => clock.now(),
    });
    const latest = (await store.experiments.get(id)) ?? record;
    const verdict = {
      outcome: report.verdict.outcome,
      reasons: report.verdict.reasons,
      judgedAt: report.generatedAt,
      trials: report.verdict.trials,
      decided: report.verdict.decided,
      undecided: report.verdict.undecided,
      ...(report.verdict.inconclusivePolicy ? { inconclusivePolicy: report.verdict.inconclusivePolicy } : {}),
      metrics: report.metrics
        .filter((m) => m.judged)
        .map((m) => ({ metric: m.metric, verdict: m.verdict, estimate: m.estimate, low: m.low, high: m.high, critical: m.policy?.critical ?? false })),
    };
    if (report.verdict.outcome === 'no data')
      return await transition(store, latest, 'failed', clock, { verdict }, `no verdict: ${joinSentences(report.verdict.reasons)}`);
    return await transition(store, latest, report.verdict.outcome, clock, { verdict }, joinSentences(report.verdict.reasons));
  } catch (error) {
    const latest = (await store.experiments.get(id).catch(() => undefined)) ?? record;
    if (latest && !isTerminal(latest.status)) {
      const cancelled = error instanceof ExperimentCancelledError;
      // Best effort: when the store itself failed this write may fail too, and what was written stays as it was.
      await transition(store, latest, cancelled ? 'cancelled' : 'failed', clock, {}, (error as Error).message).catch(() => undefined);
    }
    throw error;
  }
}
