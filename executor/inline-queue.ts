/**
 * The embedded queue: experiments run in this process, highest priority
 * (earliest lifecycle stage) first, then in submission order, within a global
 * concurrency limit and per-workload limits. Cancellation reaches a running
 * experiment here directly, and from other processes through the store.
 */
import { ExperimentCancelledError, type Clock } from '../core/index.js';
import type { Store } from '../store/index.js';
import { STAGE_PRIORITY, type ExperimentRequest } from './experiment-request.js';
import { attemptIdFor, createQueued, isTerminal, transition } from './lifecycle.js';
import { requestCancel, watchCancellation } from './cancellation-watch.js';
import { claimRun, holdRun, lapsedRunner, silentRunner, leaseHolder } from './run-lease.js';
import { leftoversOf, stopLeftovers } from '../replayer/index.js';
import type { CancelResult, ExperimentQueue, ExperimentRunner, SubmitOptions, SubmitResult } from './queue.js';

export interface InlineQueueOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly run: ExperimentRunner;
  /** @default 1 */
  readonly concurrency?: number;
  /** Experiments of a workload at once (the workload's `concurrency`). */
  readonly workloadLimits?: ReadonlyMap<string, number>;
  /** Who this runner is to other runners (run-lease.ts). @default leaseHolder() */
  readonly holder?: string;
}

interface Pending {
  readonly id: string;
  readonly workload: string;
  readonly priority: number;
  readonly sequence: number;
}

export class InlineQueue implements ExperimentQueue {
  readonly kind = 'inline';
  readonly #options: InlineQueueOptions;
  readonly #pending: Pending[] = [];
  readonly #running = new Map<string, { controller: AbortController; workload: string; done: Promise<void> }>();
  readonly #idle = new Set<() => void>();
  #sequence = 0;
  /** Errors of runs, kept for the caller (the store holds each experiment's own reason). */
  readonly errors: { id: string; error: unknown }[] = [];
  /** Experiments this queue did not run because another runner holds them, by that runner. */
  readonly heldElsewhere = new Map<string, string>();
  readonly #holder: string;

  constructor(options: InlineQueueOptions) {
    this.#options = options;
    this.#holder = options.holder ?? leaseHolder();
  }

  async submit(request: ExperimentRequest, options: SubmitOptions = {}): Promise<SubmitResult> {
    const id = await attemptIdFor(this.#options.store, request, this.#options.clock.now(), { rerun: options.rerun });
    const { record, created } = await createQueued(this.#options.store, id, request, this.#options.clock);
    // An unfinished experiment found again (its process died) is run here and resumes from its completed trials.
    const orphaned = !created && !isTerminal(record.status) && !this.#running.has(id) && !this.#pending.some((p) => p.id === id);
    if (created || orphaned) {
      this.#pending.push({ id, workload: request.workload, priority: STAGE_PRIORITY[request.stage], sequence: this.#sequence++ });
      this.#pump();
    }
    return { id, deduplicated: !created, record };
  }

  /** The order experiments start in; exposed for `tandem status` and tests. */
  get queued(): readonly string[] {
    return [...this.#pending].sort((a, b) => a.priority - b.priority || a.sequence - b.sequence).map((p) => p.id);
  }

  get running(): readonly string[] {
    return [...this.#running.keys()];
  }

  #pump(): void {
    const limit = this.#options.concurrency ?? 1;
    const ordered = [...this.#pending].sort((a, b) => a.priority - b.priority || a.sequence - b.sequence);
    for (const next of ordered) {
      if (this.#running.size >= limit) break;
      const workloadLimit = this.#options.workloadLimits?.get(next.workload);
      const ofWorkload = [...this.#running.values()].filter((r) => r.workload === next.workload).length;
      if (workloadLimit !== undefined && ofWorkload >= workloadLimit) continue;
      this.#pending.splice(this.#pending.indexOf(next), 1);
      this.#start(next);
    }
    if (this.#pending.length === 0 && this.#running.size === 0) for (const resolve of this.#idle) resolve();
  }

  #start(job: Pending): void {
    const controller = new AbortController();
    const stopWatch = new AbortController();
    const { store, clock } = this.#options;
    const done = (async () => {
      const owner = await claimRun(store, job.id, this.#holder, clock);
      if (owner !== this.#holder) {
        this.heldElsewhere.set(job.id, owner);
        return;
      }
      this.heldElsewhere.delete(job.id);
      const watching = watchCancellation(store, job.id, controller, clock, stopWatch.signal);
      const holding = holdRun(store, job.id, this.#holder, clock, stopWatch.signal);
      try {
        await this.#options.run(job.id, controller.signal);
      } finally {
        stopWatch.abort();
        await Promise.all([watching, holding]);
      }
    })()
      .then(
        () => undefined,
        (error: unknown) => void this.errors.push({ id: job.id, error }),
      )
      .finally(() => {
        this.#running.delete(job.id);
        this.#pump();
      });
    this.#running.set(job.id, { controller, workload: job.workload, done });
  }

  async cancel(id: string, reason: string): Promise<CancelResult> {
    const pending = this.#pending.findIndex((p) => p.id === id);
    const record = await this.#options.store.experiments.get(id);
    if (pending >= 0) {
      this.#pending.splice(pending, 1);
      if (record) await transition(this.#options.store, record, 'cancelled', this.#options.clock, {}, reason);
      this.#pump();
      return 'removed';
    }
    if (!record) return 'unknown';
    if (isTerminal(record.status)) return 'finished';
    if (!this.#running.has(id)) {
      // Its runner died (a killed `tandem run`): nobody would ever see the request, so it ends here.
      const lapsed = await lapsedRunner(this.#options.store, id, this.#options.clock);
      // A queued record without a lease may be about to be claimed; a running one without any was left by a runner
      // that died (every runner, `tandem run` and `tandem replay`, holds one while it runs).
      if (lapsed !== undefined && (lapsed !== 'never' || record.status === 'running')) {
        // The arms its last trial started may still run: stopped now (only those that are still the same processes).
        stopLeftovers(leftoversOf(record.trials));
        const why =
          lapsed === 'never'
            ? 'no runner holds a lease on it: the process that ran it is gone'
            : `its runner ${lapsed.holder} stopped renewing its lease at ${new Date(lapsed.expiredAtMs).toISOString()}: the process is gone`;
        await transition(this.#options.store, record, 'cancelled', this.#options.clock, {}, `${reason} (${why})`);
        return 'orphan-cancelled';
      }
    }
    await requestCancel(this.#options.store, id, reason, this.#options.clock);
    this.#running.get(id)?.controller.abort(new ExperimentCancelledError(`cancelled: ${reason}`));
    // A runner elsewhere that stopped renewing will never read the request: saying "sent" would be a lie.
    if (!this.#running.has(id) && (await silentRunner(this.#options.store, id, this.#options.clock)) !== undefined) return 'runner-silent';
    return 'signalled';
  }

  /** Resolves when nothing is queued or running. */
  idle(): Promise<void> {
    if (this.#pending.length === 0 && this.#running.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.#idle.delete(done);
        resolve();
      };
      this.#idle.add(done);
    });
  }

  /** Stops everything; running experiments are cancelled with `reason` (what the user is told: say who stopped it and how). */
  async close(reason = 'cancelled: shutting down'): Promise<void> {
    this.#pending.length = 0;
    for (const { controller } of this.#running.values()) controller.abort(new ExperimentCancelledError(reason));
    await Promise.all([...this.#running.values()].map((r) => r.done));
  }
}
