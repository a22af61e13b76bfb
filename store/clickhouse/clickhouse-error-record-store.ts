/** The ClickHouse backend's dependency error records. */
import type { DependencyErrorRecord } from '../../core/index.js';
import type { ErrorRecordStore, ReadOptions } from '../store.js';
import type { ErrorRecordFilter } from '../filters.js';
import { joinSql, sql, SqlFragment } from '../sql.js';
import { Tables, seconds } from './tables.js';

export class ClickHouseErrorRecordStore implements ErrorRecordStore {
  constructor(readonly t: Tables) {}

  async append(records: readonly DependencyErrorRecord[]): Promise<void> {
    await this.t.connection.insert(
      this.t.table('error_records'),
      records.map((r) => ({
        time: seconds(r.timeMs),
        time_ms: r.timeMs,
        dependency: r.dependency,
        shard: r.shard,
        kind: r.kind,
        message: r.message,
        experiment_id: r.experimentId,
        arm: r.arm,
        trial: r.trial,
        job: r.job,
        jobs: [...r.jobs],
      })),
    );
  }

  async query(filter: ErrorRecordFilter, options: ReadOptions = {}): Promise<DependencyErrorRecord[]> {
    const conditions = [sql`time_ms >= ${Math.max(0, Math.floor(filter.sinceMs))}`];
    if (filter.untilMs !== undefined) conditions.push(sql`time_ms < ${Math.max(0, Math.ceil(filter.untilMs))}`);
    if (filter.dependency !== undefined) conditions.push(sql`dependency = ${filter.dependency}`);
    if (filter.experimentId !== undefined) conditions.push(sql`experiment_id = ${filter.experimentId}`);
    if (filter.jobs !== undefined) {
      conditions.push(filter.jobs.length === 0 ? new SqlFragment('0') : sql`(has(${filter.jobs}, job) OR arrayExists(j -> has(${filter.jobs}, j), jobs))`);
    }
    type Row = Omit<DependencyErrorRecord, 'timeMs' | 'experimentId'> & { time_ms: string; experiment_id: string };
    const rows = await this.t.connection.rows<Row>(
      sql`SELECT time_ms, dependency, shard, kind, message, experiment_id, arm, trial, job, jobs FROM ${this.t.table('error_records')} WHERE ${joinSql(conditions, ' AND ')} ORDER BY time_ms`,
      options.signal,
    );
    return rows.map(({ time_ms, experiment_id, ...rest }) => ({ ...rest, timeMs: Number(time_ms), experimentId: experiment_id }));
  }
}
