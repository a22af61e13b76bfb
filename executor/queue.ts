/**
 * The queue interface both backends implement: `inline` runs experiments in
 * this process (priority order, global and per-workload limits); `bullmq`
 * hands them to `tandem worker` processes on any machine sharing the store
 * and Redis. Submission is idempotent through the experiment id.
 */
import type { ExperimentRecord } from '../core/index.js';
import type { ExperimentRequest } from './experiment-request.js';

export interface SubmitResult {
  readonly id: string;
  /** The same change, workload, stage and kind were submitted before: this is that experiment. */
  readonly deduplicated: boolean;
  readonly record: ExperimentRecord;
}

/** `removed`: it was still queued; `signalled`: its worker was told; `finished`: it had already ended. */
/** `orphan-cancelled`: its runner had died (lease lapsed), so the record itself was ended here. */
/** `runner-silent`: its runner stopped renewing its lease (most likely dead) but the lease has not lapsed: the request is recorded, and the cancel can finish once it lapses. */
export type CancelResult = 'removed' | 'signalled' | 'finished' | 'unknown' | 'orphan-cancelled' | 'runner-silent';

export interface SubmitOptions {
  readonly rerun?: boolean;
}

export interface ExperimentQueue {
  readonly kind: 'inline' | 'bullmq';
  /** `rerun`: run the change again even when its latest attempt finished with a verdict (see attemptIdFor). */
  submit(request: ExperimentRequest, options?: SubmitOptions): Promise<SubmitResult>;
  cancel(id: string, reason: string): Promise<CancelResult>;
  close(): Promise<void>;
}

/** Runs one stored experiment to its end; aborting `signal` cancels it. */
export type ExperimentRunner = (id: string, signal: AbortSignal) => Promise<unknown>;
