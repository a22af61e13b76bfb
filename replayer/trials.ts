/**
 * Paired trials: separately started trials, each a warm-up then a
 * measurement window, until the sequential judge has decided (`afterTrial`,
 * asked after every completed trial from `trials.min` on), `trials.max`
 * trials have completed, or the wall-time `budget` is spent. A trial that
 * fails for infrastructure reasons (an arm not ready, unreachable, too many
 * connection errors, a load it did not achieve) is replaced, up to
 * `maxReplacements`; attempted, replaced, excluded and cancelled trials all
 * stay recorded with their reason.
 */
import {
  type Clock,
  type CorpusRecord,
  type RequestOutcome,
  type DependencyCounters,
  type TrialDetails,
  type TrialRecord,
  type WorkloadConfig,
} from '../core/index.js';
import type { Store } from '../store/index.js';
import { ArmNotReadyError, instancesOf, type ArmDeployment, type ArmProvider, type ArmIdentity, type Slot } from './arms.js';
import { trialCorpus, type ShapedCorpus } from './replay-shaping.js';
import { resetArm } from './arm-reset.js';
import { leftoversOf, stopLeftovers, type RecordedProcess } from './arm-processes.js';
import { NextTrialArms, processesOf } from './next-trial-arms.js';
import { trialPrewarmsOf, type TrialPrewarms } from './trial-prewarm.js';
import { fingerprintDifferences } from './fingerprint.js';
import { pairedReplay, trialIdentity, type PairedReplayResult, type ReplayProgress } from './paired-replay.js';
import { markProcessCpu, scrapeCounters } from './counters.js';
import { cpusOfList, otherWorkShare, readArmCpus, type ArmCpuReading } from './arm-cpu-contention.js';
import type { ArmName } from './schedule.js';
import { TrialLedger } from './trial-ledger.js';

export { ReplayFailedError } from './trial-ledger.js';

export interface RunTrialsOptions {
  readonly experimentId: string;
  readonly seed: number;
  readonly workload: WorkloadConfig;
  /** A fresh stream of the corpus window, once per trial attempt. */
  readonly corpus: () => AsyncIterable<CorpusRecord>;
  readonly arms: ArmProvider;
  readonly store: Pick<Store, 'outcomes' | 'samples'>;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
  /** Called whenever the list of trial records changes, to persist it. */
  readonly onTrials?: (trials: readonly TrialRecord[]) => Promise<void> | void;
  readonly onProgress?: (trial: number, attempt: number, progress: ReplayProgress) => void;
  /** An arm whose share of refused or reset connections exceeds this makes the trial an infrastructure failure. @default 0.5 */
  readonly connectionErrorThreshold?: number;
  /** @default 1000 */
  readonly scrapeIntervalMs?: number;
  /** The egress router between the arms and their dependencies: told each trial, read after it. */
  readonly router?: { setTrial(trial: number): void; snapshot(): readonly DependencyCounters[] };
  /** A second copy of control whose responses the harness uses to cancel noise. */
  readonly controlPrime?: string;
  /** Extra headers for one arm's requests (a test-scenario header on the treatment). */
  readonly armHeaders?: Readonly<Partial<Record<ArmName, Readonly<Record<string, string>>>>>;
  /** Every measurement-window outcome as it happens (during-checks read them live). */
  readonly onOutcome?: (outcome: RequestOutcome) => void;
  /**
   * Trial records of an earlier run of this experiment (a worker died): completed
   * trials are kept, an attempt still marked running is recorded as replaced,
   * and the run continues with the trials that are missing.
   */
  readonly previous?: readonly TrialRecord[];
  /**
   * The sequential look, after each completed trial once `trials.min` have completed:
   * resolves true when the verdict is decided and no further trial is needed.
   */
  readonly afterTrial?: (completed: number) => Promise<boolean>;
  /** Called once per completed trial, before the look (the executor computes and stores the trial's metrics here). */
  readonly onTrialCompleted?: (trial: TrialRecord) => Promise<void>;
  /** Called after an attempt's replay while its arms still run, with control's URL and the gRPC services the replay called (server reflection is asked then). */
  readonly afterMeasure?: (index: number, controlUrl: string, grpcServices: ReadonlySet<string>) => Promise<void>;
}

export interface TrialsResult {
  readonly trials: readonly TrialRecord[];
  readonly completed: number;
  readonly cancelled: boolean;
  /** Why no further trial started: the judge decided, the maximum was reached, or the wall-time budget ran out. */
  readonly stoppedBy?: 'decided' | 'max' | 'budget';
}

const OUTCOME_BATCH = 5_000;

/** The trial reached its load: achieved at least `minAchievedShare` of the target rate. */
const loadHeld = (result: PairedReplayResult, minAchievedShare: number): boolean => result.achievedRate >= result.targetRate * minAchievedShare;

function summarize(result: PairedReplayResult, minAchievedShare: number): TrialDetails {
  return {
    sentPairs: result.sentPairs,
    measuredPairs: result.measuredPairs,
    droppedPairs: result.droppedPairs,
    duePairs: result.duePairs,
    cutPairs: result.cutPairs,
    skippedTruncated: result.skippedTruncated,
    maxLagMs: Number(result.maxLagMs.toFixed(3)),
    meanLagMs: Number(result.meanLagMs.toFixed(3)),
    targetRate: result.targetRate,
    achievedRate: Number(result.achievedRate.toFixed(2)),
    load: loadHeld(result, minAchievedShare) ? 'ok' : 'failed',
    firstSide: result.firstSide,
    errors: result.errors,
    connectionErrorShare: result.connectionErrorShare,
    corpusExhausted: result.corpusExhausted,
    ...(result.controlPrimeSkipped > 0 ? { controlPrimeSkipped: result.controlPrimeSkipped } : {}),
  };
}

export async function runTrials(options: RunTrialsOptions): Promise<TrialsResult> {
  const { workload, clock } = options;
  // Arms an interrupted attempt started may still run (a killed runner could not stop them): stopped first.
  stopLeftovers(leftoversOf(options.previous ?? []));
  const ledger = new TrialLedger(options.previous ?? [], clock, workload.trials.maxReplacements, options.onTrials);
  if (ledger.trials.length > 0) await ledger.persist();
  const cancelled = (): TrialsResult => ({ trials: ledger.trials, completed: ledger.completed, cancelled: true });
  const startedMs = clock.now();
  let stoppedBy: TrialsResult['stoppedBy'] = 'max';
  const prewarms = trialPrewarmsOf(options, options.arms.kind === 'deployed', (index) => ledger.nextAttempt(index));
  const next =
    workload.trials.prestart && options.arms.kind === 'deployed'
      ? new NextTrialArms(options.arms, options.signal, prewarms && ((deployments, index, trialEnded) => prewarms.warm(deployments, index, trialEnded)))
      : undefined;
  try {
    for (let index = 0; ledger.completed < workload.trials.max; index++) {
      if (ledger.hasCompleted(index)) continue;
      if (workload.trials.budget !== undefined && clock.now() - startedMs >= workload.trials.budget) {
        stoppedBy = 'budget';
        break;
      }
      for (let attempt = ledger.nextAttempt(index); ; attempt++) {
        if (options.signal?.aborted) return cancelled();
        const ended = await runAttempt(options, ledger, index, attempt, next, prewarms);
        if (ended === 'cancelled') return cancelled();
        if (ended === 'completed') {
          const settled = ledger.trials.find((t) => t.index === index && t.attempt === attempt && t.status === 'completed');
          if (settled && options.onTrialCompleted) await options.onTrialCompleted(settled);
          break;
        }
      }
      const { completed } = ledger;
      if (completed >= workload.trials.min && completed < workload.trials.max && options.afterTrial && (await options.afterTrial(completed))) {
        stoppedBy = 'decided';
        break;
      }
    }
  } finally {
    // Arms started for a trial that will not run.
    await next?.stop();
  }
  return { trials: ledger.trials, completed: ledger.completed, cancelled: false, stoppedBy };
}

/** The trial to start early while trial `index` runs: the next one not completed, unless this one may be the last. */
function upcomingTrial(ledger: TrialLedger, index: number, max: number): number | undefined {
  if (ledger.completed + 1 >= max) return undefined;
  let upcoming = index + 1;
  while (ledger.hasCompleted(upcoming)) upcoming++;
  return upcoming;
}

type AttemptEnd = 'completed' | 'replaced' | 'cancelled';

/** One attempt at trial `index`: deploy, reset, measure, and settle it in the ledger. */
async function runAttempt(
  options: RunTrialsOptions,
  ledger: TrialLedger,
  index: number,
  attempt: number,
  next: NextTrialArms | undefined,
  prewarms: TrialPrewarms | undefined,
): Promise<AttemptEnd> {
  const { workload, clock } = options;
  const startedAtMs = clock.now();
  await ledger.start(index, attempt, startedAtMs);
  const early = next?.take(index);
  // Arms started early were warmed then (NextTrialArms); arms deployed now are warmed now.
  const arms = await deployAttempt(options, ledger, index, attempt, startedAtMs, early, early === undefined ? prewarms : undefined);
  if (typeof arms === 'string') return arms;
  const { deployments, slots } = arms;
  const ended = (status: TrialRecord['status'], details: TrialDetails, reason?: string): TrialRecord => ({
    index,
    attempt,
    status,
    startedAtMs,
    endedAtMs: clock.now(),
    ...(reason !== undefined ? { reason } : {}),
    details,
  });
  // The next trial's arms, started during this one's warm-up (trials.prestart), and their record on this attempt:
  // written before any other write of the ledger, so two writes never race.
  let prestarted: Promise<RecordedProcess[]> = Promise.resolve([]);
  let recorded: Promise<unknown> = Promise.resolve();
  try {
    const differences = fingerprintDifferences(deployments.control.fingerprint, deployments.treatment.fingerprint);
    if (differences.length > 0 && !workload.trials.allowFingerprintMismatch) {
      await ledger.replaceOrFail(ended('excluded', { slots }, `arms ran in different environments (${differences.join('; ')})`));
      return 'replaced';
    }
    const upcoming = next ? upcomingTrial(ledger, index, workload.trials.max) : undefined;
    if (next && upcoming !== undefined) {
      prestarted = next.start(upcoming);
      recorded = prestarted.then((processes) => (processes.length > 0 ? ledger.annotate(index, attempt, { prestarted: processes }) : undefined));
    }
    const { result, shaped, otherWorkOnArmCpus } = await measureAttempt(options, index, attempt, arms);
    // The next trial's prewarm runs beside this one and no longer (trial-prewarm.ts).
    next?.endWarming();
    await recorded;
    const early = await prestarted;
    const prewarm = prewarms?.resultOf(index);
    const details: TrialDetails = {
      ...summarize(result, workload.replay.minAchievedShare),
      ...(otherWorkOnArmCpus !== undefined ? { otherWorkOnArmCpus: Number(otherWorkOnArmCpus.toFixed(3)) } : {}),
      ...(shaped.filtered() > 0 ? { filteredRecords: shaped.filtered() } : {}),
      slots,
      fingerprints: { control: deployments.control.fingerprint ?? null, treatment: deployments.treatment.fingerprint ?? null },
      // Cumulative per (arm, dependency): calls, errors, blocked, refused, fan-out.
      ...(options.router ? { dependencies: options.router.snapshot() } : {}),
      // Kept with the settled record too: the next trial's ledger entry starts after this one settles.
      ...(early.length > 0 ? { prestarted: early } : {}),
      ...(prewarm ? { prewarm } : {}),
    };
    if (result.cancelled) {
      await ledger.settle(ended('cancelled', details, 'cancelled'));
      return 'cancelled';
    }
    const threshold = options.connectionErrorThreshold ?? 0.5;
    const unreachable = (['control', 'treatment'] as const).filter((arm) => result.connectionErrorShare[arm] > threshold);
    if (unreachable.length > 0) {
      await ledger.replaceOrFail(ended('replaced', details, `${unreachable.join(' and ')} refused or reset more than ${threshold * 100}% of connections`));
      return 'replaced';
    }
    if (!loadHeld(result, workload.replay.minAchievedShare)) {
      // A trial that missed its load measured a different experiment: replaced like any infrastructure failure.
      const reason = `load failed: achieved ${result.achievedRate.toFixed(1)} of ${result.targetRate} pairs/s (minAchievedShare ${workload.replay.minAchievedShare})`;
      await ledger.replaceOrFail(ended('replaced', details, reason));
      return 'replaced';
    }
    await ledger.settle(ended('completed', details));
    return 'completed';
  } finally {
    await recorded.catch(() => undefined);
    await arms.stop();
  }
}

interface AttemptArms {
  readonly deployments: Record<ArmName, ArmDeployment>;
  readonly prime: ArmDeployment | undefined;
  readonly slots: Record<ArmName, Slot>;
  stop(): Promise<unknown>;
}

/**
 * The attempt's arms deployed (and control′ when it is deployed per trial), their processes recorded with
 * the attempt, and reset. An arm that is not ready replaces the attempt; any other failure ends the run.
 * `prestarted`: the arms started during the trial before (trials.prestart), taken instead of deploying; they
 * fail as a deployment would.
 */
async function deployAttempt(
  options: RunTrialsOptions,
  ledger: TrialLedger,
  index: number,
  attempt: number,
  startedAtMs: number,
  prestarted?: Promise<Record<ArmName, ArmDeployment>>,
  prewarms?: TrialPrewarms,
): Promise<AttemptArms | 'replaced' | 'cancelled'> {
  const { workload, clock, signal } = options;
  const replaced = async (error: ArmNotReadyError, details: TrialDetails = {}): Promise<'replaced'> => {
    await ledger.replaceOrFail({
      index,
      attempt,
      status: 'replaced',
      startedAtMs,
      endedAtMs: clock.now(),
      reason: error.message,
      details: { output: error.output.slice(-2_000), ...details },
    });
    return 'replaced';
  };
  let deployments: Record<ArmName, ArmDeployment>;
  try {
    deployments = await (prestarted ?? options.arms.deploy(index, signal));
  } catch (error) {
    if (signal?.aborted || !(error instanceof ArmNotReadyError)) {
      await ledger.settle({
        index,
        attempt,
        status: signal?.aborted ? 'cancelled' : 'failed',
        startedAtMs,
        endedAtMs: clock.now(),
        reason: signal?.aborted ? 'cancelled' : (error as Error).message,
      });
      if (signal?.aborted) return 'cancelled';
      throw error;
    }
    return replaced(error);
  }
  const slots = { control: deployments.control.slot, treatment: deployments.treatment.slot };
  let prime: ArmDeployment | undefined;
  if (options.arms.deployControlPrime && workload.arms?.controlPrime?.deployed) {
    try {
      prime = await options.arms.deployControlPrime(index, signal);
    } catch (error) {
      await Promise.all([deployments.control.stop(), deployments.treatment.stop()]);
      if (signal?.aborted || !(error instanceof ArmNotReadyError)) throw error;
      return replaced(error, { slots });
    }
  }
  const arms: AttemptArms = { deployments, prime, slots, stop: () => Promise.all([deployments.control.stop(), deployments.treatment.stop(), prime?.stop()]) };
  const processes = processesOf(deployments, prime);
  if (processes.length > 0) await ledger.annotate(index, attempt, { processes });
  try {
    await resetArms(workload, deployments, options.arms.compared, signal);
    await prewarms?.warm(deployments, index);
  } catch (error) {
    await arms.stop();
    if (signal?.aborted || !(error instanceof ArmNotReadyError)) throw error;
    return replaced(error, { slots });
  }
  return arms;
}

/** The records as they are replayed, noting the gRPC services they call. */
async function* notingServices(records: AsyncIterable<CorpusRecord>, services: Set<string>): AsyncIterable<CorpusRecord> {
  for await (const record of records) {
    if (record.grpc !== undefined && services.size < 1_000) services.add(record.grpc.service);
    yield record;
  }
}

/**
 * The attempt's paired replay: outcomes written in batches as they come, the arms' counters scraped and
 * their CPU marked at the measurement window's edges, the router told which trial its calls belong to. With
 * pinned arms (`trials.slotCpus`), also the share of their CPUs other work took in the window.
 */
async function measureAttempt(
  options: RunTrialsOptions,
  index: number,
  attempt: number,
  { deployments, prime }: AttemptArms,
): Promise<{ result: PairedReplayResult; shaped: ShapedCorpus; otherWorkOnArmCpus?: number }> {
  const { workload, clock } = options;
  options.router?.setTrial(index);
  const buffer: RequestOutcome[] = [];
  const writes: Promise<void>[] = [];
  const flush = (): void => {
    if (buffer.length > 0) writes.push(options.store.outcomes.append(buffer.splice(0)));
  };
  const stopScraping = new AbortController();
  const scraped = {
    experimentId: options.experimentId,
    trial: index,
    arms: (['control', 'treatment'] as const).flatMap((arm) => {
      const instances = instancesOf(deployments[arm]);
      return instances.map((i, process) => ({ arm, url: i.url, ...(i.pid !== undefined ? { pid: i.pid } : {}), ...(instances.length > 1 ? { process } : {}) }));
    }),
    samples: options.store.samples,
    clock,
  };
  const scraping = scrapeCounters({ ...scraped, intervalMs: options.scrapeIntervalMs ?? 1_000 }, stopScraping.signal);
  const marks: Promise<void>[] = [];
  const armCpus = cpusOfList((workload.trials.slotCpus ?? []).join(','));
  const armPids = scraped.arms.flatMap((a) => (a.pid !== undefined ? [a.pid] : []));
  const contended = armCpus.length > 0 && armPids.length > 0;
  let windowStart: Promise<ArmCpuReading | undefined> | undefined;
  try {
    const shaped = trialCorpus(options.corpus, workload.replay);
    const controlPrime = prime?.url ?? options.controlPrime;
    const grpcServices = new Set<string>();
    const result = await pairedReplay({
      records: options.afterMeasure ? notingServices(shaped.records, grpcServices) : shaped.records,
      arms: { control: instancesOf(deployments.control).map((i) => i.url), treatment: instancesOf(deployments.treatment).map((i) => i.url) },
      ...(controlPrime !== undefined ? { controlPrime } : {}),
      ...(options.armHeaders ? { armHeaders: options.armHeaders } : {}),
      // replay.rate is what each arm (and so its dependencies) receives in all: each of its processes gets its share.
      ratePerSecond: workload.replay.rate / Math.max(1, instancesOf(deployments.control).length),
      concurrency: workload.replay.concurrency,
      http2: workload.replay.http2,
      timeoutMs: workload.replay.timeout,
      warmupMs: workload.trials.warmup,
      measureMs: workload.trials.measure,
      seed: (options.seed + index * 7_919 + attempt * 104_729) >>> 0,
      identity: trialIdentity(options.experimentId, workload.replay.identityHeaderPrefix, index, attempt),
      clock,
      ...(options.signal ? { signal: options.signal } : {}),
      keepBodyBytes: workload.replay.compareResponses || workload.harness.responses !== undefined ? 65_536 : 0,
      onOutcome: (outcome) => {
        options.onOutcome?.(outcome);
        buffer.push(outcome);
        if (buffer.length >= OUTCOME_BATCH) flush();
      },
      ...(options.onProgress ? { onProgress: (p: ReplayProgress) => options.onProgress!(index, attempt, p) } : {}),
      onMeasureStart: () => {
        marks.push(markProcessCpu(scraped, 'measure-start'));
        if (contended) windowStart = readArmCpus(armCpus, armPids);
      },
    });
    marks.push(markProcessCpu(scraped, 'measure-end'));
    const [before, after] = contended ? await Promise.all([windowStart, readArmCpus(armCpus, armPids)]) : [];
    const otherWorkOnArmCpus = before && after ? otherWorkShare(before, after) : undefined;
    await options.afterMeasure?.(index, instancesOf(deployments.control)[0]!.url, grpcServices);
    return { result, shaped, ...(otherWorkOnArmCpus !== undefined ? { otherWorkOnArmCpus } : {}) };
  } finally {
    stopScraping.abort();
    flush();
    await Promise.all([scraping, ...writes, ...marks]);
  }
}

/** Each arm's configured reset, before the trial's warm-up (both at once: they are independent deployments). */
async function resetArms(
  workload: WorkloadConfig,
  deployments: Record<ArmName, ArmDeployment>,
  compared: Readonly<Record<ArmName, ArmIdentity>> | undefined,
  signal?: AbortSignal,
): Promise<void> {
  await Promise.all(
    (['control', 'treatment'] as const).map(async (arm) => {
      const reset = workload.arms?.[arm].reset;
      if (reset === undefined) return;
      const revision = compared?.[arm]?.revision;
      await resetArm(
        arm,
        { command: reset.command, timeoutMs: reset.timeout, ...(reset.cwd !== undefined ? { cwd: reset.cwd } : {}) },
        { url: deployments[arm].url, ...(revision !== undefined ? { revision } : {}) },
        signal,
      );
    }),
  );
}
