/**
 * One experiment's replay, end to end: router for deployed arms, dependency
 * monitors and during-checks on the monitor loop, paired trials, and the
 * experiment record kept up to date in the store (status, trials, events,
 * observations). Cleanup runs on every exit path. The verdict is the
 * harness's (harness/checks/evaluate.ts), run by the caller on the stored data.
 */
import { randomBytes } from 'node:crypto';
import { InputError, type Clock, type ExperimentRecord, type RequestOutcome, type TrialRecord, type WorkloadConfig } from '../core/index.js';
import { reflectDescriptorSet } from '../net/index.js';
import type { Store } from '../store/index.js';
import { LiveWrites } from './live-writes.js';
import { readCorpusWindow } from '../recorder/index.js';
import { runTrials, type ArmProvider, type ReplayProgress } from '../replayer/index.js';
import {
  dependencyHealthDetector,
  experimentAttributedDetector,
  grpcHealthDetector,
  loadDependencySchemas,
  runMonitor,
  startRouter,
  type Cancellation,
  type Detector,
  type EgressRouter,
  type SharedSource,
} from '../guardrails/index.js';
import { LiveOutcomes, duringCheckDetector, measureCompletedTrial, type DuringCheck } from '../harness/index.js';

export interface ReplayExperimentOptions {
  readonly workload: WorkloadConfig;
  readonly store: Store;
  readonly clock: Clock;
  readonly sharedSource: SharedSource;
  /** Build the arms; deployed arms get the router (started here when the workload has dependencies). */
  readonly arms: (router: EgressRouter | undefined) => ArmProvider;
  /** Whether the arms are deployed per trial (they then reach their dependencies through the router). */
  readonly deployed: boolean;
  /** Where paths in the config (descriptor sets) are relative to. @default process.cwd() */
  readonly cwd?: string;
  readonly seed?: number;
  readonly experimentId?: string;
  /** `replay`, `calibration`, … stored in the record's spec. */
  readonly kind: string;
  readonly spec?: Readonly<Record<string, unknown>>;
  readonly controlPrime?: string;
  /** Extra headers for one arm's requests (a test-scenario header on the treatment). */
  readonly armHeaders?: Readonly<Partial<Record<'control' | 'treatment', Readonly<Record<string, string>>>>>;
  readonly duringChecks?: readonly DuringCheck[];
  readonly signal?: AbortSignal;
  readonly onProgress?: (trial: number, attempt: number, progress: ReplayProgress) => void;
  /** Called once the experiment record exists, with its id. */
  readonly onStart?: (experimentId: string, seed: number) => void;
  /**
   * The stored record of this experiment when it is picked up again (queued by a
   * submitter, or interrupted by a crash): its id, seed and spec are kept, and
   * its completed trials are not run again.
   */
  readonly existing?: ExperimentRecord;
  /** The caller judges the replay and stores the terminal status (passed or regressed) itself. */
  readonly judgedAfter?: boolean;
  /** Who runs it (host and pid of a worker), recorded with the running event. */
  readonly runner?: string;
  /** The sequential look after each completed trial (from trials.min on): true stops the run, decided. */
  readonly afterTrial?: (experimentId: string, completed: number) => Promise<boolean>;
}

export interface ReplayExperimentResult {
  readonly experimentId: string;
  readonly seed: number;
  readonly status: ExperimentRecord['status'];
  readonly reason?: string;
  readonly record: ExperimentRecord;
  readonly cancellation?: Cancellation;
}

export function newExperimentId(kind: string, nowMs: number): string {
  return `${kind}-${new Date(nowMs).toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${randomBytes(3).toString('hex')}`;
}

/** gRPC responses are compared, and no descriptors are configured: they are asked of the control arm. */
const needsReflection = (workload: WorkloadConfig): boolean => workload.harness.responses !== undefined && workload.harness.responses.grpc === undefined;

/**
 * Server reflection of the control arm, once, after the first attempt that replayed gRPC calls: the
 * descriptors are stored with the experiment (a `grpc-descriptors` event), so its report decodes the
 * responses long after the arms are gone. A server without reflection is noted, and its responses are
 * counted as not compared.
 */
function reflectOnce(store: Store, experimentId: string, clock: Clock): (index: number, controlUrl: string, services: ReadonlySet<string>) => Promise<void> {
  let done = false;
  return async (_index, controlUrl, services) => {
    if (done || services.size === 0) return;
    done = true;
    const names = [...services].sort();
    try {
      const set = await reflectDescriptorSet(controlUrl, names, 5_000);
      await store.experiments.appendEvent({
        experimentId,
        timeMs: clock.now(),
        type: 'grpc-descriptors',
        message: `descriptors of ${names.join(', ')} by server reflection of the control arm`,
        data: { services: names, from: 'reflection', descriptorSet: Buffer.from(set).toString('base64') },
      });
    } catch (error) {
      await store.experiments.appendEvent({
        experimentId,
        timeMs: clock.now(),
        type: 'grpc-descriptors',
        message: `server reflection of the control arm failed (${(error as Error).message.slice(0, 200)}): gRPC responses are not compared; name harness.responses.grpc.descriptorSet or protoFiles`,
        data: { services: names, from: 'reflection' },
      });
    }
  };
}

export async function replayExperiment(options: ReplayExperimentOptions): Promise<ReplayExperimentResult> {
  const { workload, store, clock } = options;
  const seed = options.existing?.seed ?? options.seed ?? randomBytes(4).readUInt32LE(0);
  const nowMs = clock.now();
  const experimentId = options.existing?.id ?? options.experimentId ?? newExperimentId(options.kind, nowMs);
  // Deployed arms get the router's listeners instead of their dependencies' addresses (FIRE §4).
  // A deployed control′ reaches the dependencies through listeners of its own, counted apart from control's.
  const primeDeployed = workload.arms?.controlPrime?.deployed === true;
  const routed = options.deployed && workload.dependencies.length > 0;
  const grpcSchemas = routed ? await loadDependencySchemas(workload.dependencies, options.cwd ?? process.cwd()) : undefined;
  const router = routed
    ? await startRouter({
        experimentId,
        seed,
        dependencies: workload.dependencies,
        identityPrefix: workload.replay.identityHeaderPrefix,
        ...(grpcSchemas && grpcSchemas.size > 0 ? { grpcSchemas } : {}),
        ...(primeDeployed ? { arms: ['control', 'treatment', 'control-prime'] as const } : {}),
      })
    : undefined;
  try {
    const arms = options.arms(router);
    await store.init();
    const tier = workload.corpus.tier ?? workload.tier;
    const corpus = () =>
      readCorpusWindow(store.corpus, {
        tier,
        lookbackMs: workload.corpus.lookback,
        nowMs,
        ...(workload.corpus.limit !== undefined ? { limit: workload.corpus.limit } : {}),
      });
    const probe = corpus()[Symbol.asyncIterator]();
    const first = await probe.next();
    // Only whether the window holds a record: the read stops here (a store's query is not left streaming).
    await probe.return?.();
    if (first.done)
      throw new InputError(
        `no recorded requests of tier ${tier} in the last ${workload.corpus.lookback / 3_600_000} h: record some with \`tandem record\` or \`tandem corpus import\``,
      );
    let record: ExperimentRecord = options.existing
      ? {
          ...options.existing,
          status: 'running',
          spec: {
            ...options.existing.spec,
            design: { minTrials: workload.trials.min, maxTrials: workload.trials.max },
            ...(arms.compared ? { compared: arms.compared } : {}),
            ...options.spec,
          },
        }
      : {
          id: experimentId,
          workload: workload.name,
          status: 'running',
          createdAtMs: nowMs,
          updatedAtMs: nowMs,
          seed,
          spec: {
            kind: options.kind,
            arms: arms.kind,
            ...(arms.compared ? { compared: arms.compared } : {}),
            rate: workload.replay.rate,
            trials: workload.trials.max,
            design: { minTrials: workload.trials.min, maxTrials: workload.trials.max },
            ...options.spec,
          },
          trials: [],
        };
    const save = async (changes: Partial<ExperimentRecord>): Promise<void> => {
      record = { ...record, ...changes, updatedAtMs: Math.max(clock.now(), record.updatedAtMs + 1) };
      await store.experiments.put(record);
    };
    await save({});
    const resumed = (options.existing?.trials.length ?? 0) > 0;
    const runningData = {
      ...(options.runner ? { runner: options.runner } : {}),
      ...(resumed ? { reason: `resumed with ${options.existing!.trials.filter((t) => t.status === 'completed').length} completed trial(s)` } : {}),
    };
    await store.experiments.appendEvent({
      experimentId,
      timeMs: clock.now(),
      type: 'status',
      message: 'running',
      ...(Object.keys(runningData).length > 0 ? { data: runningData } : {}),
    });
    options.onStart?.(experimentId, seed);
    let status: ExperimentRecord['status'] = 'completed';
    let reason: string | undefined;
    // Dependency monitors (FIRE §4.2) and during-checks cancel the replay through the same signal as Ctrl-C.
    const monitorController = new AbortController();
    const jobs = { control: `${experimentId}.control`, treatment: `${experimentId}.treatment` };
    const live = new LiveOutcomes(clock);
    const detectors: Detector[] = [
      ...workload.detectors.map((d) =>
        d.kind === 'dependency-health'
          ? dependencyHealthDetector(d, clock, options.sharedSource)
          : d.kind === 'grpc-health'
            ? grpcHealthDetector(d)
            : experimentAttributedDetector(d, { jobs, sinceMs: nowMs }),
      ),
      ...(options.duringChecks ?? []).map((check) => duringCheckDetector(check, { experimentId, live, clock })),
    ];
    const liveWrites = new LiveWrites(store, experimentId, clock);
    const monitoring: Promise<Cancellation | undefined> =
      detectors.length > 0
        ? runMonitor({ experimentId, detectors, clock, controller: monitorController, onObservation: (o) => liveWrites.observation(o) })
        : Promise.resolve(undefined);
    const signal = options.signal ? AbortSignal.any([options.signal, monitorController.signal]) : monitorController.signal;
    let cancellation: Cancellation | undefined;
    try {
      const result = await runTrials({
        experimentId,
        seed,
        workload,
        corpus,
        arms,
        store,
        // During-checks read outcomes as they happen, not when a batch is stored.
        ...(options.duringChecks?.length ? { onOutcome: (outcome: RequestOutcome) => live.add([outcome]) } : {}),
        clock,
        signal,
        onTrials: (trials: readonly TrialRecord[]) => save({ trials: [...trials] }),
        onProgress: (trial: number, attempt: number, progress: ReplayProgress) => {
          liveWrites.progress(trial, attempt, progress);
          options.onProgress?.(trial, attempt, progress);
        },
        ...(router ? { router } : {}),
        ...(options.controlPrime !== undefined ? { controlPrime: options.controlPrime } : {}),
        ...(options.armHeaders ? { armHeaders: options.armHeaders } : {}),
        ...(resumed ? { previous: options.existing!.trials } : {}),
        // Each trial's metrics, computed once from its own outcomes: every look and report reads them instead.
        onTrialCompleted: async (trial: TrialRecord) => void (await measureCompletedTrial(store, experimentId, trial, { seed, nowMs: clock.now() })),
        ...(options.afterTrial ? { afterTrial: (completed: number) => options.afterTrial!(experimentId, completed) } : {}),
        ...(needsReflection(workload) ? { afterMeasure: reflectOnce(store, experimentId, clock) } : {}),
      });
      if (result.stoppedBy && !result.cancelled) {
        const why = {
          decided: 'the verdict was decided',
          max: `the maximum of ${workload.trials.max} trials was reached`,
          budget: `the trial budget of ${(workload.trials.budget ?? 0) / 1000} s was spent`,
        }[result.stoppedBy];
        await store.experiments.appendEvent({
          experimentId,
          timeMs: clock.now(),
          type: 'trials-stopped',
          message: `stopped after ${result.completed} trial(s): ${why}`,
          data: { stoppedBy: result.stoppedBy, completed: result.completed, elapsedMs: clock.now() - nowMs },
        });
      }
      if (result.cancelled) {
        status = 'cancelled';
        reason = monitorController.signal.aborted
          ? (monitorController.signal.reason as Error).message
          : ((options.signal?.reason as Error | undefined)?.message ?? 'interrupted');
      }
    } catch (error) {
      status = 'failed';
      reason = (error as Error).message;
      throw error;
    } finally {
      if (!monitorController.signal.aborted) monitorController.abort(new Error('replay finished'));
      cancellation = await monitoring;
      await liveWrites.finish();
      if (cancellation)
        await store.experiments.appendEvent({
          experimentId,
          timeMs: cancellation.terminatedMs,
          type: 'cancelled-by-monitor',
          message: cancellation.reason,
          data: { ...cancellation },
        });
      // A judged experiment stays running until its verdict is stored: `completed` is a plain replay's end.
      if (!(options.judgedAfter && status === 'completed')) {
        await save({ status, ...(reason ? { reason } : {}) });
        await store.experiments.appendEvent({ experimentId, timeMs: clock.now(), type: 'status', message: status, ...(reason ? { data: { reason } } : {}) });
      }
    }
    return { experimentId, seed, status, ...(reason ? { reason } : {}), record, ...(cancellation ? { cancellation } : {}) };
  } finally {
    await router?.close();
  }
}
