/**
 * One experiment run as the executor performs it, from its stored record:
 * replay (arms, router, monitors, trials) → harness verdict → terminal
 * status. Idempotent: a finished experiment is left alone, a running one (its
 * worker died) resumes with its completed trials. A failure of any step,
 * including the store, marks the experiment failed with the reason when the
 * store still takes writes; nothing already written is touched.
 */
import { hostname } from 'node:os';
import { ConfigError, ExperimentCancelledError, type Clock, type ExperimentRecord, type TandemConfig, type WorkloadConfig } from '../core/index.js';
import type { Store } from '../store/index.js';
import type { SharedSource } from '../guardrails/index.js';
import { calibrate, evaluateExperiment, loadChecksModule, loadExperimentData, metricPolicies, trialMetrics, type Calibration } from '../harness/index.js';
import type { ReplayProgress } from '../replayer/index.js';
import { armsFor, controlAgainstControl } from './experiment-arms.js';
import type { ExperimentRequest } from './experiment-request.js';
import { isTerminal, requestOf, transition } from './lifecycle.js';
import { replayExperiment } from './replay-experiment.js';

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
}

function applyOverrides(workload: WorkloadConfig, overrides: ExperimentRequest['overrides']): WorkloadConfig {
  if (!overrides) return workload;
  return {
    ...workload,
    replay: { ...workload.replay, ...(overrides.rate !== undefined ? { rate: overrides.rate } : {}) },
    trials: {
      ...workload.trials,
      ...(overrides.trials !== undefined ? { count: overrides.trials } : {}),
      ...(overrides.warmupMs !== undefined ? { warmup: overrides.warmupMs } : {}),
      ...(overrides.measureMs !== undefined ? { measure: overrides.measureMs } : {}),
    },
  };
}

/** The newest completed A/A calibration of a workload. */
export async function latestCalibration(store: Pick<Store, 'experiments'>, workload: string): Promise<Calibration | undefined> {
  const records = await store.experiments.list({ workload, limit: 1000 });
  const found = records.find((r) => r.spec.kind === 'calibration' && r.status === 'completed' && r.verdict?.calibration !== undefined);
  return found?.verdict?.calibration as Calibration | undefined;
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
    const choice = sameBuild ? { control: request.control, treatment: request.control, controlRevision: request.controlRevision, treatmentRevision: request.controlRevision } : request;
    const checks = workload.harness.checksModule !== undefined ? await loadChecksModule(workload.harness.checksModule, ctx.cwd) : undefined;
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
      ...(checks?.during ? { duringChecks: checks.during } : {}),
      ...(request.treatmentHeaders ? { armHeaders: { treatment: request.treatmentHeaders } } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(ctx.onProgress ? { onProgress: ctx.onProgress } : {}),
    });
    record = result.record;
    if (result.status !== 'completed') return record;
    if (aa) {
      const data = await loadExperimentData(store, id);
      const metrics = data.trials.flatMap((t) => trialMetrics(t, { seed: record!.seed, resamples: 0 }));
      const calibration = calibrate(metrics, {
        experimentId: id,
        workload: configured.name,
        createdAtMs: clock.now(),
        policies: metricPolicies(configured.checks, [...new Set(metrics.map((m) => m.metric))]),
        slotSigns: data.slotSigns,
        configuredTrials: configured.trials.count,
        seed: record.seed,
        alpha: configured.harness.alpha,
        minPoints: configured.harness.minPoints,
      });
      return await transition(store, data.record, 'completed', clock, { verdict: { calibration } });
    }
    const calibration = await latestCalibration(store, workload.name);
    const report = await evaluateExperiment(store, id, { workload, ...(calibration ? { calibration } : {}), ...(checks ? { checks } : {}), now: () => clock.now() });
    const latest = (await store.experiments.get(id)) ?? record;
    const verdict = { outcome: report.verdict.outcome, score: report.verdict.score, reasons: report.verdict.reasons, judgedAt: report.generatedAt, metrics: report.metrics.filter((m) => m.judged).map((m) => ({ metric: m.metric, verdict: m.verdict, estimate: m.estimate, low: m.low, high: m.high })) };
    if (report.verdict.outcome === 'no data') return await transition(store, latest, 'failed', clock, { verdict }, `no verdict: ${report.verdict.reasons.join('; ')}`);
    return await transition(store, latest, report.verdict.outcome, clock, { verdict }, report.verdict.reasons.join('; '));
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
