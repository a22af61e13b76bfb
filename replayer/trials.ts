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
import { TandemError, type Clock, type CorpusRecord, type RequestOutcome, type TrialRecord, type WorkloadConfig } from '../core/index.js';
import type { Store } from '../store/index.js';
import { ArmNotReadyError, type ArmDeployment, type ArmProvider, type ArmIdentity } from './arms.js';
import { shapeCorpus, wrapped, type ShapedCorpus } from './replay-shaping.js';
import { resetArm } from './arm-reset.js';
import { leftoversOf, recordProcess, stopLeftovers } from './arm-processes.js';
import { fingerprintDifferences } from './fingerprint.js';
import { pairedReplay, type PairedReplayResult, type ReplayProgress } from './paired-replay.js';
import { markProcessCpu, scrapeCounters } from './counters.js';
import type { ArmName } from './schedule.js';

/** More trials failed for infrastructure reasons than the workload allows replacing. */
export class ReplayFailedError extends TandemError {
  override readonly code = 'TANDEM_ERR_REPLAY';
}

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
  readonly router?: { setTrial(trial: number): void; snapshot(): readonly unknown[] };
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

function summarize(result: PairedReplayResult, minAchievedShare: number): Record<string, unknown> {
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
  // An interrupted attempt is the executor's failure, not the trial's: it does not count against maxReplacements.
  // Arms an interrupted attempt started may still run (a killed runner could not stop them): stopped first.
  stopLeftovers(leftoversOf(options.previous ?? []));
  const trials: TrialRecord[] = (options.previous ?? []).map((t) =>
    t.status === 'running' ? { ...t, status: 'replaced', endedAtMs: clock.now(), reason: 'interrupted: the worker running this trial stopped (crash or kill); replaced on resume' } : t,
  );
  const threshold = options.connectionErrorThreshold ?? 0.5;
  let replacements = trials.filter((t) => (t.status === 'replaced' || t.status === 'excluded') && !t.reason?.startsWith('interrupted:')).length;
  let completed = trials.filter((t) => t.status === 'completed').length;
  const persist = async (): Promise<void> => {
    await options.onTrials?.(trials);
  };
  /** The attempt in progress is stored as running, so a crash leaves a record of it. */
  const settle = (record: TrialRecord): void => {
    const running = trials.findIndex((t) => t.status === 'running' && t.index === record.index && t.attempt === record.attempt);
    if (running >= 0) trials.splice(running, 1);
    trials.push(record);
  };
  const replaceOrFail = async (record: TrialRecord): Promise<void> => {
    settle(record);
    await persist();
    if (++replacements > workload.trials.maxReplacements) {
      const reasons = trials.filter((t) => t.status === 'replaced' || t.status === 'excluded').map((t) => `trial ${t.index} attempt ${t.attempt}: ${t.reason}`);
      throw new ReplayFailedError(`more than ${workload.trials.maxReplacements} trial(s) failed for infrastructure reasons:\n  ${reasons.join('\n  ')}`);
    }
  };
  if (trials.length > 0) await persist();
  const startedMs = clock.now();
  let stoppedBy: TrialsResult['stoppedBy'] = 'max';

  for (let index = 0; completed < workload.trials.max; index++) {
    if (trials.some((t) => t.index === index && t.status === 'completed')) continue;
    if (workload.trials.budget !== undefined && clock.now() - startedMs >= workload.trials.budget) {
      stoppedBy = 'budget';
      break;
    }
    const firstAttempt = 1 + Math.max(0, ...trials.filter((t) => t.index === index).map((t) => t.attempt));
    for (let attempt = firstAttempt; ; attempt++) {
      if (options.signal?.aborted) return { trials, completed, cancelled: true };
      const startedAtMs = clock.now();
      trials.push({ index, attempt, status: 'running', startedAtMs });
      await persist();
      let deployments: Record<ArmName, ArmDeployment>;
      try {
        deployments = await options.arms.deploy(index, options.signal);
      } catch (error) {
        if (options.signal?.aborted || !(error instanceof ArmNotReadyError)) {
          settle({ index, attempt, status: options.signal?.aborted ? 'cancelled' : 'failed', startedAtMs, endedAtMs: clock.now(), reason: options.signal?.aborted ? 'cancelled' : (error as Error).message });
          await persist();
          if (options.signal?.aborted) return { trials, completed, cancelled: true };
          throw error;
        }
        await replaceOrFail({ index, attempt, status: 'replaced', startedAtMs, endedAtMs: clock.now(), reason: error.message, details: { output: error.output.slice(-2_000) } });
        continue;
      }
      const slots = { control: deployments.control.slot, treatment: deployments.treatment.slot };
      let prime: ArmDeployment | undefined;
      if (options.arms.deployControlPrime && workload.arms?.controlPrime?.deployed) {
        try {
          prime = await options.arms.deployControlPrime(index, options.signal);
        } catch (error) {
          await Promise.all([deployments.control.stop(), deployments.treatment.stop()]);
          if (options.signal?.aborted || !(error instanceof ArmNotReadyError)) throw error;
          await replaceOrFail({ index, attempt, status: 'replaced', startedAtMs, endedAtMs: clock.now(), reason: error.message, details: { output: error.output.slice(-2_000), slots } });
          continue;
        }
      }
      const stopArms = (): Promise<unknown> => Promise.all([deployments.control.stop(), deployments.treatment.stop(), prime?.stop()]);
      const processes = [...(['control', 'treatment'] as const).flatMap((arm) => (deployments[arm].pid !== undefined ? [recordProcess(arm, deployments[arm].pid!)] : [])), ...(prime?.pid !== undefined ? [recordProcess('control-prime', prime.pid)] : [])];
      if (processes.length > 0) {
        const at = trials.findIndex((t) => t.status === 'running' && t.index === index && t.attempt === attempt);
        if (at >= 0) trials[at] = { ...trials[at]!, details: { ...(trials[at]!.details ?? {}), processes } };
        await persist();
      }
      try {
        await resetArms(workload, deployments, options.arms.compared, options.signal);
      } catch (error) {
        await stopArms();
        if (options.signal?.aborted || !(error instanceof ArmNotReadyError)) throw error;
        await replaceOrFail({ index, attempt, status: 'replaced', startedAtMs, endedAtMs: clock.now(), reason: error.message, details: { output: error.output.slice(-2_000), slots } });
        continue;
      }
      try {
        const differences = fingerprintDifferences(deployments.control.fingerprint, deployments.treatment.fingerprint);
        if (differences.length > 0 && !workload.trials.allowFingerprintMismatch) {
          await replaceOrFail({ index, attempt, status: 'excluded', startedAtMs, endedAtMs: clock.now(), reason: `arms ran in different environments (${differences.join('; ')})`, details: { slots } });
          continue;
        }
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
          arms: (['control', 'treatment'] as const).map((arm) => ({ arm, url: deployments[arm].url, ...(deployments[arm].pid !== undefined ? { pid: deployments[arm].pid } : {}) })),
          samples: options.store.samples,
          clock,
        };
        const scraping = scrapeCounters({ ...scraped, intervalMs: options.scrapeIntervalMs ?? 1_000 }, stopScraping.signal);
        const marks: Promise<void>[] = [];
        let result: PairedReplayResult;
        let shaped: ShapedCorpus | undefined;
        try {
          shaped = shapeCorpus(workload.replay.wrap ? wrapped(options.corpus) : options.corpus(), workload.replay);
          result = await pairedReplay({
            records: shaped.records,
            arms: { control: deployments.control.url, treatment: deployments.treatment.url },
            ...(prime !== undefined ? { controlPrime: prime.url } : options.controlPrime !== undefined ? { controlPrime: options.controlPrime } : {}),
            ...(options.armHeaders ? { armHeaders: options.armHeaders } : {}),
            ratePerSecond: workload.replay.rate,
            concurrency: workload.replay.concurrency,
            timeoutMs: workload.replay.timeout,
            warmupMs: workload.trials.warmup,
            measureMs: workload.trials.measure,
            seed: (options.seed + index * 7_919 + attempt * 104_729) >>> 0,
            identity: {
              experimentId: options.experimentId,
              trial: index,
              attempt,
              headerPrefix: workload.replay.identityHeaderPrefix,
              jobs: { control: `${options.experimentId}.control`, treatment: `${options.experimentId}.treatment` },
            },
            clock,
            ...(options.signal ? { signal: options.signal } : {}),
            keepBodyBytes: workload.replay.compareResponses || workload.harness.responses !== undefined ? 65_536 : 0,
            onOutcome: (outcome) => {
              options.onOutcome?.(outcome);
              buffer.push(outcome);
              if (buffer.length >= OUTCOME_BATCH) flush();
            },
            ...(options.onProgress ? { onProgress: (p: ReplayProgress) => options.onProgress!(index, attempt, p) } : {}),
            onMeasureStart: () => void marks.push(markProcessCpu(scraped, 'measure-start')),
          });
          marks.push(markProcessCpu(scraped, 'measure-end'));
        } finally {
          stopScraping.abort();
          flush();
          await Promise.all([scraping, ...writes, ...marks]);
        }
        const details = {
          ...summarize(result, workload.replay.minAchievedShare),
          ...(shaped !== undefined && shaped.filtered() > 0 ? { filteredRecords: shaped.filtered() } : {}),
          slots,
          fingerprints: { control: deployments.control.fingerprint ?? null, treatment: deployments.treatment.fingerprint ?? null },
          // Cumulative per (arm, dependency): calls, errors, blocked, refused, fan-out.
          ...(options.router ? { dependencies: options.router.snapshot() } : {}),
        };
        if (result.cancelled) {
          settle({ index, attempt, status: 'cancelled', startedAtMs, endedAtMs: clock.now(), reason: 'cancelled', details });
          await persist();
          return { trials, completed, cancelled: true };
        }
        const unreachable = (['control', 'treatment'] as const).filter((arm) => result.connectionErrorShare[arm] > threshold);
        if (unreachable.length > 0) {
          await replaceOrFail({
            index,
            attempt,
            status: 'replaced',
            startedAtMs,
            endedAtMs: clock.now(),
            reason: `${unreachable.join(' and ')} refused or reset more than ${threshold * 100}% of connections`,
            details,
          });
          continue;
        }
        if (!loadHeld(result, workload.replay.minAchievedShare)) {
          // A trial that missed its load measured a different experiment: replaced like any infrastructure failure.
          await replaceOrFail({ index, attempt, status: 'replaced', startedAtMs, endedAtMs: clock.now(), reason: `load failed: achieved ${result.achievedRate.toFixed(1)} of ${result.targetRate} pairs/s (minAchievedShare ${workload.replay.minAchievedShare})`, details });
          continue;
        }
        settle({ index, attempt, status: 'completed', startedAtMs, endedAtMs: clock.now(), details });
        completed++;
        await persist();
        break;
      } finally {
        await stopArms();
      }
    }
    if (completed >= workload.trials.min && completed < workload.trials.max && options.afterTrial && (await options.afterTrial(completed))) {
      stoppedBy = 'decided';
      break;
    }
  }
  return { trials, completed, cancelled: false, stoppedBy };
}

/** Each arm's configured reset, before the trial's warm-up (both at once: they are independent deployments). */
async function resetArms(workload: WorkloadConfig, deployments: Record<ArmName, ArmDeployment>, compared: Readonly<Record<ArmName, ArmIdentity>> | undefined, signal?: AbortSignal): Promise<void> {
  await Promise.all(
    (['control', 'treatment'] as const).map(async (arm) => {
      const reset = workload.arms?.[arm].reset;
      if (reset === undefined) return;
      const revision = compared?.[arm]?.revision;
      await resetArm(arm, { command: reset.command, timeoutMs: reset.timeout, ...(reset.cwd !== undefined ? { cwd: reset.cwd } : {}) }, { url: deployments[arm].url, ...(revision !== undefined ? { revision } : {}) }, signal);
    }),
  );
}
