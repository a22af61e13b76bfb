/** Running experiments: requests, the lifecycle, one experiment end to end with its sequential looks, inline and BullMQ queues. */
export { replayExperiment, newExperimentId, type ReplayExperimentOptions, type ReplayExperimentResult } from './replay-experiment.js';
export { armsFor, httpUrl, controlAgainstControl, type ArmChoice } from './experiment-arms.js';
export {
  STAGES,
  STAGE_PRIORITY,
  parseRequest,
  dedupeKey,
  experimentIdFor,
  type Stage,
  type ExperimentRequest,
  type ExperimentRequestInput,
} from './experiment-request.js';
export { attemptIdFor, createQueued, transition, isTerminal, requestOf, endedWithoutVerdict, TERMINAL_STATUSES } from './lifecycle.js';
export { runExperiment, latestCalibration, applyOverrides, type RunContext } from './run-experiment.js';
export { formatLook, type LookMetric, type LookSummary } from './look-summary.js';
export { requestCancel, watchCancellation, CANCEL_EVENT } from './cancellation-watch.js';
export { type ExperimentQueue, type ExperimentRunner, type SubmitOptions as QueueSubmitOptions, type SubmitResult, type CancelResult } from './queue.js';
export { InlineQueue, type InlineQueueOptions } from './inline-queue.js';
// The BullMQ backend is imported from './bullmq-queue.js' by whoever composes it (cli/): through this index
// every command would load BullMQ and ioredis (about 0.2 s) whatever queue it uses.
export type { BullMqOptions, BullMqWorkerOptions } from './bullmq-queue.js';
export { claimRun, holdRun, leaseHolder, liveRunner, silentRunner, waitForRunner, LEASE_TTL_MS } from './run-lease.js';
