/** The ClickHouse backend's time series. */
import type { Sample } from '../../core/index.js';
import type { ReadOptions, SampleStore } from '../store.js';
import { joinSql, sql } from '../sql.js';
import { assertName } from '../names.js';
import { Tables, parseJson, seconds } from './tables.js';

export class ClickHouseSampleStore implements SampleStore {
  constructor(readonly t: Tables) {}

  async append(samples: readonly Sample[]): Promise<void> {
    for (const s of samples) assertName(s.experimentId, 'sample experimentId');
    await this.t.connection.insert(
      this.t.table('samples'),
      samples.map((s) => ({
        experiment_id: s.experimentId,
        trial: s.trial,
        arm: s.arm,
        metric: s.metric,
        time: seconds(s.timeMs),
        time_ms: s.timeMs,
        value: s.value,
        labels: JSON.stringify(s.labels ?? {}),
      })),
    );
  }

  async *read(experimentId: string, options: ReadOptions & { metric?: string; arm?: string; trial?: number } = {}): AsyncIterable<Sample> {
    const conditions = [sql`experiment_id = ${experimentId}`];
    if (options.metric !== undefined) conditions.push(sql`metric = ${options.metric}`);
    if (options.arm !== undefined) conditions.push(sql`arm = ${options.arm}`);
    if (options.trial !== undefined) conditions.push(sql`trial = ${options.trial}`);
    const query = sql`SELECT experiment_id, trial, arm, metric, time_ms, value, labels FROM ${this.t.table('samples')} WHERE ${joinSql(conditions, ' AND ')} ORDER BY time_ms`;
    type Row = { experiment_id: string; trial: number; arm: string; metric: string; time_ms: string; value: number; labels: string };
    for await (const r of this.t.connection.stream<Row>(query, options.signal)) {
      const labels = parseJson<Record<string, string>>(r.labels, {});
      yield {
        experimentId: r.experiment_id,
        trial: Number(r.trial),
        arm: r.arm,
        metric: r.metric,
        timeMs: Number(r.time_ms),
        value: Number(r.value),
        ...(Object.keys(labels).length > 0 ? { labels } : {}),
      };
    }
  }
}
