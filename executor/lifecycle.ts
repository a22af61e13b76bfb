/**
 * The experiment lifecycle: queued → running → passed | regressed |
 * inconclusive | cancelled | failed (`completed` ends an A/A calibration or a plain replay). Every
 * transition is stored on the record and appended as an event with its time
 * and reason.
 */
import { UsageError, type Clock, type ExperimentRecord, type ExperimentStatus } from '../core/index.js';
import type { Store } from '../store/index.js';
import { STAGE_PRIORITY, dedupeKey, experimentIdFor, type ExperimentRequest } from './experiment-request.js';

export const TERMINAL_STATUSES: ReadonlySet<ExperimentStatus> = new Set([
  'passed',
  'regressed',
  'inconclusive',
  'cancelled',
  'failed',
  'completed',
  'deferred',
]);

export const isTerminal = (status: ExperimentStatus): boolean => TERMINAL_STATUSES.has(status);

/** The request stored with a record, or undefined for records not made by the executor. */
export function requestOf(record: ExperimentRecord): ExperimentRequest | undefined {
  return record.spec.request as ExperimentRequest | undefined;
}

/** Outcomes a resubmission of the same change runs again: nothing was decided. Passed, regressed and inconclusive ones are reused. */
const RERUN_ON_RESUBMISSION: ReadonlySet<ExperimentStatus> = new Set(['failed', 'cancelled', 'deferred']);
export const MAX_ATTEMPTS = 100;

/**
 * The id a submission gets. Without a change it is new every time. With one,
 * attempts of the same change are `exp-<key>`, `exp-<key>-2`, …: the latest
 * attempt is reused (deduplicated) unless it failed, was cancelled or deferred
 * — or `rerun` asks and it has finished — then the next attempt's id is given
 * (a submission being deferred again keeps a deferred attempt).
 * An unfinished attempt is always reused: two runs of one change at once would
 * compete for the same arms.
 */
export async function attemptIdFor(
  store: Pick<Store, 'experiments'>,
  request: ExperimentRequest,
  nowMs: number,
  options: { rerun?: boolean | undefined; deferring?: boolean } = {},
): Promise<string> {
  const first = experimentIdFor(request, nowMs);
  if (dedupeKey(request) === undefined) return first;
  const idOf = (attempt: number): string => (attempt === 1 ? first : `${first}-${attempt}`);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const latest = await store.experiments.get(idOf(attempt));
    if (latest === undefined) return idOf(attempt);
    const next = await store.experiments.get(idOf(attempt + 1));
    if (next !== undefined) continue;
    // A submission that is itself deferred again keeps the deferred attempt it finds: nothing new would run.
    const reuseDeferred = options.deferring === true && latest.status === 'deferred';
    const again = isTerminal(latest.status) && !reuseDeferred && (options.rerun === true || RERUN_ON_RESUBMISSION.has(latest.status));
    if (!again) return latest.id;
    if (attempt === MAX_ATTEMPTS) break;
    return idOf(attempt + 1);
  }
  throw new UsageError(`change ${request.change} of workload ${request.workload} was already run ${MAX_ATTEMPTS} times; submit it under another --change`);
}

/** Store a new queued experiment, or return the existing one with the same id (a deduplicated submission). */
export async function createQueued(
  store: Pick<Store, 'experiments'>,
  id: string,
  request: ExperimentRequest,
  clock: Clock,
): Promise<{ record: ExperimentRecord; created: boolean }> {
  const existing = await store.experiments.get(id);
  if (existing) return { record: existing, created: false };
  const nowMs = clock.now();
  const key = dedupeKey(request);
  const record: ExperimentRecord = {
    id,
    workload: request.workload,
    status: 'queued',
    createdAtMs: nowMs,
    updatedAtMs: nowMs,
    seed: request.seed ?? Math.floor(Math.random() * 0xffffffff),
    spec: {
      kind: request.kind === 'aa' ? 'calibration' : request.kind,
      stage: request.stage,
      priority: STAGE_PRIORITY[request.stage],
      request,
      ...(key !== undefined ? { dedupeKey: key } : {}),
    },
    trials: [],
  };
  await store.experiments.put(record);
  await store.experiments.appendEvent({
    experimentId: id,
    timeMs: nowMs,
    type: 'status',
    message: 'queued',
    data: { stage: request.stage, ...(request.change ? { change: request.change } : {}) },
  });
  return { record, created: true };
}

/** Move an experiment to `status`, storing the record and the event. */
export async function transition(
  store: Pick<Store, 'experiments'>,
  record: ExperimentRecord,
  status: ExperimentStatus,
  clock: Clock,
  changes: Partial<ExperimentRecord> = {},
  reason?: string,
): Promise<ExperimentRecord> {
  const next: ExperimentRecord = {
    ...record,
    ...changes,
    status,
    updatedAtMs: Math.max(clock.now(), record.updatedAtMs + 1),
    ...(reason !== undefined ? { reason } : {}),
  };
  await store.experiments.put(next);
  await store.experiments.appendEvent({
    experimentId: record.id,
    timeMs: clock.now(),
    type: 'status',
    message: status,
    ...(reason !== undefined ? { data: { reason } } : {}),
  });
  return next;
}

/** The experiment ended failed because no verdict could be reached (too little data), not because its infrastructure failed. */
export function endedWithoutVerdict(record: ExperimentRecord): boolean {
  return record.status === 'failed' && record.verdict?.outcome === 'no data';
}
