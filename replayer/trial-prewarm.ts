/**
 * The prewarm (`trials.prewarm`, arm-prewarm.ts) as a run of trials uses it: each trial's arms are sent that
 * trial's own first records with its identity, and what they were sent is kept for the trial's record.
 *
 * Beside a running trial (arms started early, `trials.prestart`) the prewarm ends when that trial's window does,
 * sent or not: the next trial takes its arms then, and a prewarm still sending would make it wait. With one core
 * kept busy a prewarm spread over half the trial had not finished by then, and trials took 4.9–5.1 s instead of 4.1.
 */
import type { Clock, CorpusRecord, WorkloadConfig } from '../core/index.js';
import { prewarmArms, type PrewarmResult } from './arm-prewarm.js';
import type { ArmDeployment } from './arms.js';
import { trialIdentity } from './paired-replay.js';
import { trialCorpus } from './replay-shaping.js';
import type { ArmName } from './schedule.js';

/** What a run of trials gives the prewarm (RunTrialsOptions has all of it). */
export interface TrialPrewarmSource {
  readonly experimentId: string;
  readonly workload: WorkloadConfig;
  readonly corpus: () => AsyncIterable<CorpusRecord>;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
  readonly armHeaders?: Readonly<Partial<Record<ArmName, Readonly<Record<string, string>>>>>;
}

export class TrialPrewarms {
  readonly #source: TrialPrewarmSource;
  readonly #attemptOf: (index: number) => number;
  readonly #results = new Map<number, PrewarmResult>();

  /** `attemptOf`: the attempt the arms of trial `index` will serve, for their requests' identity. */
  constructor(source: TrialPrewarmSource, attemptOf: (index: number) => number) {
    this.#source = source;
    this.#attemptOf = attemptOf;
  }

  /**
   * Trial `index`'s arms warmed. `besideTrialEnded`: they were started early and the trial before runs; the
   * prewarm is spread over half its length and ends when this signal does. Without it, back to back.
   */
  async warm(deployments: Readonly<Record<ArmName, ArmDeployment>>, index: number, besideTrialEnded?: AbortSignal): Promise<PrewarmResult> {
    const { workload, clock } = this.#source;
    // An earlier attempt's, until this one's is known.
    this.#results.delete(index);
    const trialMs = workload.trials.warmup + workload.trials.measure;
    const shaped = trialCorpus(this.#source.corpus, workload.replay);
    const result = await prewarmArms(deployments, {
      records: shaped.records,
      count: workload.trials.prewarm,
      timeoutMs: workload.replay.timeout,
      // No longer than the trial it may run beside, and spread over half of it there (arm-prewarm.ts).
      budgetMs: trialMs,
      spacingMs: besideTrialEnded ? (0.5 * trialMs) / workload.trials.prewarm : 0,
      identity: trialIdentity(this.#source.experimentId, workload.replay.identityHeaderPrefix, index, this.#attemptOf(index)),
      clock,
      ...(this.#source.signal ? { signal: this.#source.signal } : {}),
      ...(besideTrialEnded ? { until: besideTrialEnded } : {}),
      ...(workload.replay.http2 ? { http2: workload.replay.http2 } : {}),
      ...(this.#source.armHeaders ? { armHeaders: this.#source.armHeaders } : {}),
    });
    this.#results.set(index, result);
    return result;
  }

  /** What trial `index`'s arms were last sent before it, for its record (undefined: not warmed). */
  resultOf(index: number): PrewarmResult | undefined {
    return this.#results.get(index);
  }
}

/** The run's prewarms, or undefined where the workload sends none (`trials.prewarm` 0, or arms it does not deploy). */
export function trialPrewarmsOf(source: TrialPrewarmSource, deployed: boolean, attemptOf: (index: number) => number): TrialPrewarms | undefined {
  return source.workload.trials.prewarm === 0 || !deployed ? undefined : new TrialPrewarms(source, attemptOf);
}
