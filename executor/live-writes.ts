/**
 * What a running experiment writes as it happens, not at its end, so anyone
 * reading the store (`tandem serve`, on another machine) can follow it: each
 * detector check, and the replay's progress once a second.
 */
import type { Clock, DetectorObservation } from '../core/index.js';
import type { ReplayProgress } from '../replayer/index.js';
import type { Store } from '../store/index.js';

const PROGRESS_EVERY_MS = 2_000;

export class LiveWrites {
  /** Writes in order, one at a time; the replay never waits for them. */
  #chain: Promise<void> = Promise.resolve();
  readonly #unsaved: DetectorObservation[] = [];
  /** The last progress written: its trial, attempt, phase and monotonic time. */
  #lastProgress: { key: string; atMs: number } | undefined;

  constructor(
    readonly store: Store,
    readonly experimentId: string,
    readonly clock: Clock,
  ) {}

  observation(observation: DetectorObservation): void {
    this.#unsaved.push(observation);
    this.#enqueue(async () => {
      const batch = this.#unsaved.splice(0);
      if (batch.length === 0) return;
      try {
        await this.store.observations.append(batch);
      } catch {
        this.#unsaved.unshift(...batch); // kept for finish(), which reports a store that stays down
      }
    });
  }

  /**
   * At most one every PROGRESS_EVERY_MS per attempt and phase (a new attempt or phase is written at once): the
   * replay reports every second, and each event is a write that every reader of the events then reads.
   */
  progress(trial: number, attempt: number, progress: ReplayProgress): void {
    const key = `${trial}/${attempt}/${progress.phase}`;
    const now = this.clock.monotonic();
    if (this.#lastProgress?.key === key && now - this.#lastProgress.atMs < PROGRESS_EVERY_MS) return;
    this.#lastProgress = { key, atMs: now };
    // Advisory: the trial ledger and the outcomes carry the facts, so a lost progress event loses nothing judged.
    this.#enqueue(() =>
      this.store.experiments
        .appendEvent({ experimentId: this.experimentId, timeMs: this.clock.now(), type: 'progress', data: { trial, attempt, ...progress } })
        .catch(() => undefined),
    );
  }

  /** Waits for every write; observations that could not be written are written now, or the error is thrown. */
  async finish(): Promise<void> {
    await this.#chain;
    if (this.#unsaved.length > 0) await this.store.observations.append(this.#unsaved.splice(0));
  }

  #enqueue(write: () => Promise<unknown>): void {
    this.#chain = this.#chain.then(write).then(() => undefined);
  }
}
