/**
 * The record of an experiment's trials as they run: every attempt is stored
 * as running first (a crash leaves a record of it), then settled as
 * completed, replaced, excluded, failed or cancelled; infrastructure failures
 * count against `maxReplacements`, interrupted attempts (the runner died) do not.
 */
import { TandemError, type Clock, type TrialDetails, type TrialRecord } from '../core/index.js';

/** More trials failed for infrastructure reasons than the workload allows replacing. */
export class ReplayFailedError extends TandemError {
  override readonly code = 'TANDEM_ERR_REPLAY';
}

const INTERRUPTED = 'interrupted: the worker running this trial stopped (crash or kill); replaced on resume';

export class TrialLedger {
  readonly trials: TrialRecord[];
  #replacements: number;
  #completed: number;
  readonly #maxReplacements: number;
  readonly #onTrials: ((trials: readonly TrialRecord[]) => Promise<void> | void) | undefined;

  /** `previous`: the records of an earlier run of this experiment; an attempt still marked running was interrupted. */
  constructor(previous: readonly TrialRecord[], clock: Clock, maxReplacements: number, onTrials?: (trials: readonly TrialRecord[]) => Promise<void> | void) {
    this.trials = previous.map((t) => (t.status === 'running' ? { ...t, status: 'replaced', endedAtMs: clock.now(), reason: INTERRUPTED } : t));
    this.#replacements = this.trials.filter((t) => (t.status === 'replaced' || t.status === 'excluded') && !t.reason?.startsWith('interrupted:')).length;
    this.#completed = this.trials.filter((t) => t.status === 'completed').length;
    this.#maxReplacements = maxReplacements;
    this.#onTrials = onTrials;
  }

  get completed(): number {
    return this.#completed;
  }

  hasCompleted(index: number): boolean {
    return this.trials.some((t) => t.index === index && t.status === 'completed');
  }

  /** The next attempt number of trial `index` (attempts of an earlier run count). */
  nextAttempt(index: number): number {
    return 1 + Math.max(0, ...this.trials.filter((t) => t.index === index).map((t) => t.attempt));
  }

  async persist(): Promise<void> {
    await this.#onTrials?.(this.trials);
  }

  async start(index: number, attempt: number, startedAtMs: number): Promise<void> {
    this.trials.push({ index, attempt, status: 'running', startedAtMs });
    await this.persist();
  }

  /** Details added to the running attempt (its arms' processes, so a later run can stop them). */
  async annotate(index: number, attempt: number, details: TrialDetails): Promise<void> {
    const at = this.trials.findIndex((t) => t.status === 'running' && t.index === index && t.attempt === attempt);
    if (at >= 0) this.trials[at] = { ...this.trials[at]!, details: { ...(this.trials[at]!.details ?? {}), ...details } };
    await this.persist();
  }

  /** The attempt's final record replaces its running one. */
  async settle(record: TrialRecord): Promise<void> {
    const running = this.trials.findIndex((t) => t.status === 'running' && t.index === record.index && t.attempt === record.attempt);
    if (running >= 0) this.trials.splice(running, 1);
    this.trials.push(record);
    if (record.status === 'completed') this.#completed++;
    await this.persist();
  }

  /** An infrastructure failure: replaced by another attempt, or the run fails once there were too many. */
  async replaceOrFail(record: TrialRecord): Promise<void> {
    await this.settle(record);
    if (++this.#replacements > this.#maxReplacements) {
      const reasons = this.trials
        .filter((t) => t.status === 'replaced' || t.status === 'excluded')
        .map((t) => `trial ${t.index + 1} attempt ${t.attempt}: ${t.reason}`);
      throw new ReplayFailedError(`more than ${this.#maxReplacements} trial(s) failed for infrastructure reasons:\n  ${reasons.join('\n  ')}`);
    }
  }
}
