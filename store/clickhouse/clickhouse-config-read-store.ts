/** The ClickHouse backend's config consumption index. */
import type { ConfigRead } from '../../core/index.js';
import type { ConfigReadStore, ConfigReadSummary, ReadOptions } from '../store.js';
import { joinSql, sql } from '../sql.js';
import { Tables, seconds } from './tables.js';

export class ClickHouseConfigReadStore implements ConfigReadStore {
  constructor(readonly t: Tables) {}

  async append(reads: readonly ConfigRead[]): Promise<void> {
    await this.t.connection.insert(
      this.t.table('config_reads'),
      reads.map((r) => ({ service: r.service, file: r.file, setting: r.setting, time: seconds(r.timeMs), time_ms: r.timeMs })),
    );
  }

  async latest(filter: { sinceMs: number; service?: string; file?: string }, options: ReadOptions = {}): Promise<ConfigReadSummary[]> {
    const conditions = [sql`time_ms >= ${Math.max(0, Math.floor(filter.sinceMs))}`];
    if (filter.service !== undefined) conditions.push(sql`service = ${filter.service}`);
    if (filter.file !== undefined) conditions.push(sql`file = ${filter.file}`);
    const rows = await this.t.connection.rows<{ service: string; file: string; setting: string; last: string }>(
      sql`SELECT service, file, setting, max(time_ms) AS last FROM ${this.t.table('config_reads')} WHERE ${joinSql(conditions, ' AND ')} GROUP BY service, file, setting ORDER BY service, file, setting`,
      options.signal,
    );
    return rows.map((r) => ({ service: r.service, file: r.file, setting: r.setting, lastReadMs: Number(r.last) }));
  }
}
