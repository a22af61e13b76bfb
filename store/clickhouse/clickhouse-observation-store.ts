/** The ClickHouse backend's detector checks. */
import type { DetectorObservation } from '../../core/index.js';
import type { ObservationStore, ReadOptions } from '../store.js';
import { joinSql, sql } from '../sql.js';
import { Tables } from './tables.js';

export class ClickHouseObservationStore implements ObservationStore {
  constructor(readonly t: Tables) {}

  async append(observations: readonly DetectorObservation[]): Promise<void> {
    await this.t.connection.insert(
      this.t.table('observations'),
      observations.map((o) => ({
        experiment_id: o.experimentId,
        detector: o.detector,
        time_ms: o.timeMs,
        value: o.value,
        baseline: o.baseline,
        verdict: o.verdict,
        message: o.message ?? '',
      })),
    );
  }

  async read(experimentId: string, options: ReadOptions & { detector?: string } = {}): Promise<DetectorObservation[]> {
    const conditions = [sql`experiment_id = ${experimentId}`];
    if (options.detector !== undefined) conditions.push(sql`detector = ${options.detector}`);
    type Row = { detector: string; time_ms: string; value: number | null; baseline: number | null; verdict: DetectorObservation['verdict']; message: string };
    const rows = await this.t.connection.rows<Row>(
      sql`SELECT detector, time_ms, value, baseline, verdict, message FROM ${this.t.table('observations')} WHERE ${joinSql(conditions, ' AND ')} ORDER BY time_ms, detector`,
      options.signal,
    );
    return rows.map((r) => ({
      experimentId,
      detector: r.detector,
      timeMs: Number(r.time_ms),
      value: r.value === null ? null : Number(r.value),
      baseline: r.baseline === null ? null : Number(r.baseline),
      verdict: r.verdict,
      ...(r.message !== '' ? { message: r.message } : {}),
    }));
  }
}
