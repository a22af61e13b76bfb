/** The ClickHouse backend's experiment records (one row per version, the newest read) and their event logs. */
import type { ExperimentEvent, ExperimentRecord } from '../../core/index.js';
import type { ExperimentStore, ReadOptions } from '../store.js';
import { experimentRecordOf } from '../record-guards.js';
import { pageOf, statusesOf, type ExperimentQuery } from '../experiment-query.js';
import { joinSql, sql, SqlFragment } from '../sql.js';
import { assertName } from '../names.js';
import { Tables, parseJson } from './tables.js';
import { experimentRow } from './experiment-rows.js';

export class ClickHouseExperimentStore implements ExperimentStore {
  #seq = 0;
  constructor(readonly t: Tables) {}

  async put(record: ExperimentRecord): Promise<void> {
    assertName(record.id, 'experiment id');
    await this.t.connection.insert(this.t.table('experiments'), [experimentRow(record)]);
  }

  async get(id: string): Promise<ExperimentRecord | undefined> {
    const rows = await this.t.connection.rows<{ record: string }>(
      sql`SELECT record FROM ${this.t.table('experiments')} FINAL WHERE id = ${assertName(id, 'experiment id')} ORDER BY updated_ms DESC LIMIT 1`,
    );
    const value = rows[0] ? parseJson<unknown>(rows[0].record, null) : undefined;
    return experimentRecordOf(value);
  }

  async list(query: ExperimentQuery = {}): Promise<ExperimentRecord[]> {
    const { offset, limit } = pageOf(query);
    const page = limit !== undefined ? sql` LIMIT ${offset}, ${limit}` : offset > 0 ? sql` LIMIT ${offset}, 4611686018427387904` : new SqlFragment('');
    const rows = await this.t.connection.rows<{ record: string }>(sql`SELECT record FROM ${this.#matching(query)} ORDER BY created_ms DESC, id DESC${page}`);
    return rows.flatMap((r) => experimentRecordOf(parseJson<unknown>(r.record, null)) ?? []);
  }

  async count(query: ExperimentQuery = {}): Promise<number> {
    const rows = await this.t.connection.rows<{ n: string }>(sql`SELECT count() AS n FROM ${this.#matching(query)}`);
    return Number(rows[0]?.n ?? 0);
  }

  /** The latest version of each matching experiment, as a subquery. */
  #matching(query: ExperimentQuery): SqlFragment {
    // Fields that change are filtered after FINAL collapses versions: filtering first would match superseded rows.
    const inner = query.workload !== undefined ? sql` WHERE workload = ${query.workload}` : new SqlFragment('');
    const conditions = [new SqlFragment('1')];
    const statuses = statusesOf(query);
    if (statuses !== undefined)
      conditions.push(
        statuses.length === 0
          ? new SqlFragment('0')
          : sql`status IN (${joinSql(
              statuses.map((x) => sql`${x}`),
              ', ',
            )})`,
      );
    if (query.kind !== undefined) conditions.push(sql`kind = ${query.kind}`);
    if (query.stage !== undefined) conditions.push(sql`stage = ${query.stage}`);
    if (query.change !== undefined) conditions.push(sql`change_id = ${query.change}`);
    if (query.outcome !== undefined) conditions.push(sql`outcome = ${query.outcome}`);
    if (query.sinceMs !== undefined) conditions.push(sql`created_ms >= ${Math.max(0, Math.ceil(query.sinceMs))}`);
    if (query.untilMs !== undefined) conditions.push(sql`created_ms < ${Math.max(0, Math.ceil(query.untilMs))}`);
    return sql`(SELECT record, id, status, created_ms, kind, stage, change_id, outcome FROM ${this.t.table('experiments')} FINAL${inner}) WHERE ${joinSql(conditions, ' AND ')}`;
  }

  async appendEvent(event: ExperimentEvent): Promise<void> {
    assertName(event.experimentId, 'event experimentId');
    await this.t.connection.insert(this.t.table('experiment_events'), [
      {
        experiment_id: event.experimentId,
        time_ms: event.timeMs,
        seq: this.#seq++,
        type: event.type,
        message: event.message ?? '',
        data: JSON.stringify(event.data ?? {}),
      },
    ]);
  }

  async events(experimentId: string, options: ReadOptions & { types?: readonly string[] } = {}): Promise<ExperimentEvent[]> {
    const types =
      options.types === undefined
        ? new SqlFragment('')
        : options.types.length === 0
          ? new SqlFragment(' AND 0')
          : sql` AND type IN (${joinSql(
              options.types.map((t) => sql`${t}`),
              ', ',
            )})`;
    const rows = await this.t.connection.rows<{ time_ms: string; type: string; message: string; data: string }>(
      sql`SELECT time_ms, type, message, data FROM ${this.t.table('experiment_events')} WHERE experiment_id = ${experimentId}${types} ORDER BY time_ms, seq`,
      options.signal,
    );
    return rows.map((r) => {
      const data = parseJson<Record<string, unknown>>(r.data, {});
      return {
        experimentId,
        timeMs: Number(r.time_ms),
        type: r.type,
        ...(r.message !== '' ? { message: r.message } : {}),
        ...(Object.keys(data).length > 0 ? { data } : {}),
      };
    });
  }
}
