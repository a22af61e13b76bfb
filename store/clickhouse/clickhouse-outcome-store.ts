/** Per-request replay outcomes in ClickHouse, sorted for the harness's reads: experiment, trial, intended time. */
import type { ErrorClass, RequestOutcome, ResponseView } from '../../core/index.js';
import { isResponseView } from '../record-guards.js';
import type { OutcomeStore, ReadOptions } from '../store.js';
import { assertName } from '../names.js';
import { joinSql, sql } from '../sql.js';
import { seconds, type Tables } from './tables.js';

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

  async *read(experimentId: string, options: ReadOptions & { trial?: number; arm?: string } = {}): AsyncIterable<RequestOutcome> {
    const conditions = [sql`experiment_id = ${assertName(experimentId, 'experiment id')}`];
    if (options.trial !== undefined) conditions.push(sql`trial = ${options.trial}`);
    if (options.arm !== undefined) conditions.push(sql`arm = ${options.arm}`);
    const query = sql`SELECT trial, attempt, arm, record_id, intended_ms, latency_ms, status, bytes, error_class, body_hash, first, body, response, process, grpc_status FROM ${this.t.table('outcomes')} WHERE ${joinSql(conditions, ' AND ')} ORDER BY trial, intended_ms, arm`;
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
}
