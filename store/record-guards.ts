/**
 * Shape checks for records read back from storage. A line that parses as
 * JSON but lacks a record's fields (hand-edited, written by another version)
 * is reported as corrupt rather than handed on to crash a reader later.
 */
import type {
  ConfigRead,
  CorpusRecord,
  DependencyErrorRecord,
  DetectorObservation,
  ExperimentEvent,
  ExperimentRecord,
  RequestOutcome,
  ResponseView,
  Sample,
  TrialRecord,
} from '../core/index.js';
import { trialDetailsSchema } from '../core/index.js';

type Fields = Record<string, 'string' | 'number' | 'boolean' | 'object'>;

function hasFields(value: unknown, fields: Fields): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  for (const [key, type] of Object.entries(fields)) {
    const field = record[key];
    if (type === 'object' ? field === null || typeof field !== 'object' : typeof field !== type) return false;
  }
  return true;
}

/** A recorded gRPC answer read back: every field of its type, messages and trailers as strings. */
const isGrpcCall = (v: unknown): boolean =>
  hasFields(v, {
    service: 'string',
    method: 'string',
    requestMessages: 'number',
    responseMessages: 'object',
    responseTruncated: 'boolean',
    status: 'number',
    statusMessage: 'string',
    trailers: 'object',
  }) &&
  Array.isArray(v.responseMessages) &&
  v.responseMessages.every((m) => typeof m === 'string') &&
  !Array.isArray(v.trailers) &&
  Object.values(v.trailers as object).every((t) => typeof t === 'string');

const SAMPLE_MODES: ReadonlySet<unknown> = new Set<CorpusRecord['sampleMode']>(['uniform', 'sticky', 'import', 'mirror']);

export const isCorpusRecord = (v: unknown): v is CorpusRecord =>
  (v === null || typeof v !== 'object' || (v as { grpc?: unknown }).grpc === undefined || isGrpcCall((v as { grpc?: unknown }).grpc)) &&
  hasFields(v, {
    id: 'string',
    tier: 'string',
    timeMs: 'number',
    method: 'string',
    path: 'string',
    headers: 'object',
    body: 'string',
    bodyTruncated: 'boolean',
    sampleRate: 'number',
    sampleMode: 'string',
  }) &&
  SAMPLE_MODES.has(v.sampleMode);

export const isSample = (v: unknown): v is Sample =>
  hasFields(v, { experimentId: 'string', trial: 'number', arm: 'string', metric: 'string', timeMs: 'number', value: 'number' });

export const isExperimentRecord = (v: unknown): v is ExperimentRecord =>
  hasFields(v, {
    id: 'string',
    workload: 'string',
    status: 'string',
    createdAtMs: 'number',
    updatedAtMs: 'number',
    seed: 'number',
    spec: 'object',
    trials: 'object',
  }) && Array.isArray(v.trials);

/** What decides whether a completed trial is judged, and how: unreadable, the trial is not judged. */
const JUDGING_DETAILS = new Set(['load', 'slots']);

/**
 * An experiment record read back, its trials' details checked field by field against their schema
 * (core/trial-details.ts): a field of the wrong shape is dropped and named in `details.unreadable`, so no reader
 * takes it for something else; a completed trial whose load or slots are unreadable is excluded, with that reason.
 * Fields of another version's that the schema does not know are dropped.
 */
export function experimentRecordOf(value: unknown): ExperimentRecord | undefined {
  if (!isExperimentRecord(value)) return undefined;
  return { ...value, trials: value.trials.map(checkedTrial) };
}

function checkedTrial(trial: TrialRecord): TrialRecord {
  const raw: unknown = trial.details;
  if (raw === undefined) return trial;
  const kept: Record<string, unknown> = {};
  const unreadable: string[] = [];
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) unreadable.push('details: not an object');
  else {
    const shape = trialDetailsSchema.shape;
    for (const [key, field] of Object.entries(raw)) {
      if (!Object.hasOwn(shape, key) || key === 'unreadable') continue;
      const parsed = shape[key as keyof typeof shape].safeParse(field);
      if (parsed.success) kept[key] = parsed.data;
      else unreadable.push(`${key}: ${parsed.error.issues[0]?.message ?? 'not of its shape'}`);
    }
  }
  if (unreadable.length === 0) return { ...trial, details: kept };
  const details = { ...kept, unreadable };
  const judging = unreadable.filter((u) => JUDGING_DETAILS.has(u.split(':')[0]!) || u.startsWith('details:'));
  if (trial.status === 'completed' && judging.length > 0)
    return { ...trial, status: 'excluded', reason: `its stored details are unreadable (${judging.join('; ')})`, details };
  return { ...trial, details };
}

export const isExperimentEvent = (v: unknown): v is ExperimentEvent => hasFields(v, { experimentId: 'string', timeMs: 'number', type: 'string' });

export const isDetectorObservation = (v: unknown): v is DetectorObservation =>
  hasFields(v, { experimentId: 'string', detector: 'string', timeMs: 'number', verdict: 'string' });

export const isConfigRead = (v: unknown): v is ConfigRead => hasFields(v, { service: 'string', file: 'string', setting: 'string', timeMs: 'number' });

export const isDependencyErrorRecord = (v: unknown): v is DependencyErrorRecord =>
  hasFields(v, {
    timeMs: 'number',
    dependency: 'string',
    shard: 'string',
    kind: 'string',
    message: 'string',
    experimentId: 'string',
    arm: 'string',
    trial: 'string',
    job: 'string',
    jobs: 'object',
  });

/** A sketch read back is stored data: every entry must be a [hash, first value] pair of strings before anything destructures it. */
const isSketch = (v: unknown): boolean =>
  v !== null &&
  typeof v === 'object' &&
  !Array.isArray(v) &&
  Object.values(v).every((e) => Array.isArray(e) && e.length === 2 && typeof e[0] === 'string' && typeof e[1] === 'string');

export const isResponseView = (v: unknown): v is ResponseView =>
  hasFields(v, { method: 'string', path: 'string', decodedBytes: 'number', contentHash: 'string' }) &&
  (v.sketch === undefined || isSketch(v.sketch)) &&
  (v.skipped === undefined || typeof v.skipped === 'string');

export const isRequestOutcome = (v: unknown): v is RequestOutcome =>
  hasFields(v, {
    experimentId: 'string',
    trial: 'number',
    attempt: 'number',
    arm: 'string',
    recordId: 'string',
    intendedMs: 'number',
    latencyMs: 'number',
    status: 'number',
    bytes: 'number',
    errorClass: 'string',
    bodyHash: 'string',
    first: 'boolean',
  }) &&
  (v.response === undefined || isResponseView(v.response)) &&
  (v.process === undefined || (Number.isInteger(v.process) && (v.process as number) >= 0)) &&
  (v.grpcStatus === undefined || (Number.isInteger(v.grpcStatus) && (v.grpcStatus as number) >= -1));
