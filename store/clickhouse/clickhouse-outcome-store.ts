/** Per-request replay outcomes in ClickHouse, sorted for the harness's reads: experiment, trial, intended time. */
import { latencyBucketSql, type ErrorClass, type RequestOutcome, type ResponseView } from '../../core/index.js';
import { isResponseView } from '../record-guards.js';
import type { OutcomeAggregate, OutcomeFields, OutcomeStore, ReadOptions } from '../store.js';
import { assertName } from '../names.js';
import { joinSql, sql, SqlFragment } from '../sql.js';
import { seconds, type Tables } from './tables.js';
import { OutcomeAggregator } from '../outcome-aggregates.js';

interface OutcomeRow {
  trial: number;
  attempt: number;
  arm: string;
  record_id: string;
  intended_ms: number;
  latency_ms: number;
  status: number;
  bytes: string;
  error_class: string;
  body_hash: string;
  first: number;
  body: string;
  response: string;
  process: number;
  grpc_status: number;
}

/** The stored response view, or nothing when the column is empty or not a view (a row is stored data, not trusted code). */
function responseView(text: string): ResponseView | undefined {
  if (text === '') return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return isResponseView(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

export class ClickHouseOutcomeStore implements OutcomeStore {
  constructor(readonly t: Tables) {}

  async append(outcomes: readonly RequestOutcome[]): Promise<void> {
    for (const o of outcomes) assertName(o.experimentId, 'outcome experimentId');
    await this.t.connection.insert(
      this.t.table('outcomes'),
      outcomes.map((o) => ({
        experiment_id: o.experimentId,
        trial: o.trial,
        attempt: o.attempt,
        arm: o.arm,
        record_id: o.recordId,
        time: seconds(o.intendedMs),
        intended_ms: o.intendedMs,
        latency_ms: o.latencyMs,
        status: o.status,
        bytes: o.bytes,
        error_class: o.errorClass,
        body_hash: o.bodyHash,
        first: o.first ? 1 : 0,
        body: o.body ?? '',
        response: o.response ? JSON.stringify(o.response) : '',
        process: o.process ?? -1,
        grpc_status: o.grpcStatus ?? -2,
      })),
    );
  }

  async *read(experimentId: string, options: ReadOptions & { trial?: number; arm?: string; fields?: OutcomeFields } = {}): AsyncIterable<RequestOutcome> {
    const conditions = [sql`experiment_id = ${assertName(experimentId, 'experiment id')}`];
    if (options.trial !== undefined) conditions.push(sql`trial = ${options.trial}`);
    if (options.arm !== undefined) conditions.push(sql`arm = ${options.arm}`);
    // Timing only: the body and response columns are most of a row's bytes, and judging reads neither.
    const responses = options.fields === 'timing' ? new SqlFragment("'' AS body, '' AS response") : new SqlFragment('body, response');
    const query = sql`SELECT trial, attempt, arm, record_id, intended_ms, latency_ms, status, bytes, error_class, body_hash, first, ${responses}, process, grpc_status FROM ${this.t.table('outcomes')} WHERE ${joinSql(conditions, ' AND ')} ORDER BY trial, intended_ms, arm`;
    for await (const r of this.t.connection.stream<OutcomeRow>(query, options.signal)) {
      yield {
        experimentId,
        trial: Number(r.trial),
        attempt: Number(r.attempt),
        arm: r.arm,
        recordId: r.record_id,
        intendedMs: Number(r.intended_ms),
        latencyMs: Number(r.latency_ms),
        status: Number(r.status),
        bytes: Number(r.bytes),
        errorClass: r.error_class as ErrorClass,
        bodyHash: r.body_hash,
        first: Number(r.first) === 1,
        ...(r.body !== '' ? { body: r.body } : {}),
        ...(responseView(r.response) ? { response: responseView(r.response)! } : {}),
        ...(Number(r.process) >= 0 ? { process: Number(r.process) } : {}),
        ...(Number(r.grpc_status) >= -1 ? { grpcStatus: Number(r.grpc_status) } : {}),
      };
    }
  }

  /** One GROUP BY over the experiment's rows (or one trial's): the server sends a few hundred rows per trial and arm, not the outcomes. */
  async aggregate(experimentId: string, options: ReadOptions & { trial?: number } = {}): Promise<OutcomeAggregate[]> {
    const conditions = [sql`experiment_id = ${assertName(experimentId, 'experiment id')}`];
    if (options.trial !== undefined) conditions.push(sql`trial = ${options.trial}`);
    const bucket = new SqlFragment(latencyBucketSql('latency_ms'));
    const query = sql`SELECT trial, attempt, arm, error_class, ${bucket} AS bucket, count() AS answers, sum(latency_ms) AS latency_sum, min(latency_ms) AS latency_min, max(latency_ms) AS latency_max, sum(bytes) AS bytes_sum FROM ${this.t.table('outcomes')} WHERE ${joinSql(conditions, ' AND ')} GROUP BY trial, attempt, arm, error_class, bucket ORDER BY trial, attempt, arm`;
    const aggregator = new OutcomeAggregator();
    for (const r of await this.t.connection.rows<AggregateRow>(query, options.signal)) {
      // Each row is one error class and one latency bucket of its trial, attempt and arm.
      const answers = Number(r.answers);
      aggregator.merge({
        trial: Number(r.trial),
        attempt: Number(r.attempt),
        arm: r.arm,
        count: answers,
        latencySumMs: Number(r.latency_sum),
        latencyMinMs: Number(r.latency_min),
        latencyMaxMs: Number(r.latency_max),
        bytesSum: Number(r.bytes_sum),
        errors: r.error_class !== '' ? { [r.error_class]: answers } : {},
        latencyBuckets: { [String(r.bucket)]: answers },
      });
    }
    return aggregator.aggregates();
  }
}

interface AggregateRow {
  trial: number;
  attempt: number;
  arm: string;
  error_class: string;
  bucket: number;
  answers: string;
  latency_sum: number;
  latency_min: number;
  latency_max: number;
  bytes_sum: string;
}
