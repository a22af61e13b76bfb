/**
 * Experiment-attributed detector (FIRE §4.2): asks the dependency's error
 * records for errors from exactly this experiment's jobs — control and
 * treatment — so a violation is evidence about this experiment, not about the
 * shared dependency. Errors of other experiments are never counted, and nor
 * are control's: control is the build already in production, so its errors
 * are no evidence against the change (they are reported in the message).
 * The result names every implicated job (batch granularity).
 */
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { request } from 'undici';
import type { DependencyErrorRecord, DetectorConfig } from '../../core/index.js';
import { scheduleOf, type CheckResult, type Detector } from '../monitor.js';
import { ConfigError, UpstreamError } from '../../core/index.js';
import { grpcStatusName, grpcUnaryCall } from '../../net/index.js';

/** The error-record format as a gRPC service (error-records.proto, shipped beside this module). */
export const ERROR_RECORDS_PROTO = fileURLToPath(new URL('./error-records.proto', import.meta.url));
export const ERROR_RECORDS_LIST_PATH = '/tandem.errors.v1.ErrorRecords/List';
let errorRecordTypes: { request: protobuf.Type; response: protobuf.Type } | undefined;
const types = (): { request: protobuf.Type; response: protobuf.Type } => {
  if (errorRecordTypes === undefined) {
    const root = protobuf.loadSync(ERROR_RECORDS_PROTO);
    errorRecordTypes = { request: root.lookupType('tandem.errors.v1.ListRequest'), response: root.lookupType('tandem.errors.v1.ListResponse') };
  }
  return errorRecordTypes;
};

/** Records from a gRPC service's `tandem.errors.v1.ErrorRecords/List`, in the same shape as the JSON format. */
async function fetchGrpcRecords(source: string, sinceMs: number, jobs: readonly string[]): Promise<unknown[]> {
  const { request: Request, response: Response } = types();
  const answer = await grpcUnaryCall(source, ERROR_RECORDS_LIST_PATH, Request.encode({ sinceMs, jobs }).finish(), 5_000);
  if (answer.status !== 0) {
    if (answer.status === 12)
      throw new ConfigError(
        [
          `detector source ${source} does not serve ${ERROR_RECORDS_LIST_PATH.slice(1)} (UNIMPLEMENTED): it must answer the error-record format (docs/guardrails.md, "Error records")`,
        ],
        'detector',
      );
    throw new UpstreamError(`${source} answered ${grpcStatusName(answer.status)}${answer.message !== '' ? `: ${answer.message.slice(0, 200)}` : ''}`);
  }
  const decoded = answer.payload
    ? (Response.toObject(Response.decode(answer.payload), { longs: Number, arrays: true, defaults: true }) as { records: Record<string, unknown>[] })
    : { records: [] };
  return decoded.records;
}

export interface AttributedContext {
  /** The experiment's jobs, by arm (e.g. { control: "exp.control", treatment: "exp.treatment" }). */
  readonly jobs: Readonly<Record<string, string>>;
  /** Only records at or after this time count, epoch ms. */
  readonly sinceMs: number;
}

/**
 * Records from an error-record source: an HTTP endpoint (`GET source?since=…&job=…`, answering
 * `{ records: [...] }`), or with `protocol: grpc` a gRPC service's `ErrorRecords/List` (error-records.proto).
 */
async function fetchRecords(source: string, sinceMs: number, jobs: readonly string[], protocol: 'http' | 'grpc' = 'http'): Promise<DependencyErrorRecord[]> {
  if (protocol === 'grpc') return checked(source, await fetchGrpcRecords(source, sinceMs, jobs));
  const url = new URL(source);
  url.searchParams.set('since', String(sinceMs));
  for (const job of jobs) url.searchParams.append('job', job);
  const response = await request(url, { headersTimeout: 5_000, bodyTimeout: 5_000 });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new UpstreamError(`${source} answered ${response.statusCode}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ConfigError(
      [`detector source ${source} did not answer JSON: it must answer the error-record format (docs/guardrails.md, "Error records")`],
      'detector',
    );
  }
  const records = (body as { records?: unknown } | null)?.records;
  if (!Array.isArray(records))
    throw new ConfigError([`detector source ${source} did not answer { "records": [...] } (docs/guardrails.md, "Error records")`], 'detector');
  return checked(source, records);
}

/** Every record in the error-record format, or a config error naming the first that is not. */
function checked(source: string, records: readonly unknown[]): DependencyErrorRecord[] {
  for (const [i, record] of records.entries()) {
    const problem = recordProblem(record);
    if (problem !== undefined)
      throw new ConfigError(
        [`detector source ${source} answered a record of another shape: records[${i}].${problem} (docs/guardrails.md, "Error records")`],
        'detector',
      );
  }
  return records as DependencyErrorRecord[];
}

const STRING_FIELDS = ['dependency', 'shard', 'kind', 'message', 'experimentId', 'arm', 'trial', 'job'] as const;

/** What is wrong with one error record, or undefined: the shape of ERROR_RECORD_SCHEMA. */
export function recordProblem(record: unknown): string | undefined {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return 'must be an object';
  const r = record as Record<string, unknown>;
  if (typeof r.timeMs !== 'number' || !Number.isFinite(r.timeMs)) return 'timeMs must be a number (epoch ms)';
  for (const field of STRING_FIELDS) if (typeof r[field] !== 'string') return `${field} must be a string ("" when absent)`;
  if (!Array.isArray(r.jobs) || r.jobs.some((j) => typeof j !== 'string')) return 'jobs must be an array of strings';
  return undefined;
}

/** The error-record format as JSON Schema (docs/guardrails.md); `recordProblem` checks the same shape. */
export const ERROR_RECORD_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'Tandem error records',
  type: 'object',
  required: ['records'],
  properties: {
    records: {
      type: 'array',
      items: {
        type: 'object',
        required: ['timeMs', ...STRING_FIELDS, 'jobs'],
        properties: {
          timeMs: { type: 'number', description: 'When the error happened, epoch ms.' },
          ...Object.fromEntries(STRING_FIELDS.map((f) => [f, { type: 'string' }])),
          jobs: { type: 'array', items: { type: 'string' }, description: 'Every job implicated when the error is at batch granularity.' },
        },
      },
    },
  },
} as const;

export function experimentAttributedDetector(config: DetectorConfig, context: AttributedContext): Detector {
  const jobArm = new Map(Object.entries(context.jobs).map(([arm, job]) => [job, arm]));
  return {
    ...scheduleOf(config),
    async prime() {
      // The baseline is "nothing before the experiment started": records are filtered by time and job.
      // One read now checks the source answers the error-record format: a source of another shape is a
      // configuration error at the start, not "monitoring unavailable" cancelling the experiment later.
      await fetchRecords(config.source, context.sinceMs, [...jobArm.keys()], config.protocol);
    },
    async check(): Promise<CheckResult> {
      const records = (await fetchRecords(config.source, context.sinceMs, [...jobArm.keys()], config.protocol)).filter(
        (r) => jobArm.has(r.job) || r.jobs.some((job) => jobArm.has(job)),
      );
      const implicates = (r: DependencyErrorRecord, arm: string): boolean => [r.job, ...r.jobs].some((job) => jobArm.get(job) === arm);
      const treatment = records.filter((r) => implicates(r, 'treatment'));
      const control = records.filter((r) => implicates(r, 'control') && !implicates(r, 'treatment'));
      const implicated = [...new Set(treatment.flatMap((r) => [r.job, ...r.jobs]))].filter((job) => job !== '').sort();
      const count = treatment.length;
      const controlNote = control.length > 0 ? `; control has ${control.length} (not counted)` : '';
      return {
        verdict: count > config.rule.above ? 'violation' : 'clear',
        value: count,
        baseline: 0,
        message:
          count === 0
            ? `no errors from treatment${controlNote}`
            : `${count} error record(s) from treatment (jobs: ${implicated.join(', ')}): ${treatment[0]!.kind}: ${treatment[0]!.message}${controlNote}`,
      };
    },
  };
}
