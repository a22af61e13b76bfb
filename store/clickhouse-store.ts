/**
 * The ClickHouse backend, for corpora and time series at scale and for
 * sharing one store between many `tandem worker` machines. Rows go in as
 * JSONEachRow; every value in a WHERE clause goes through store/sql.ts.
 */
import type { ConfigRead, DependencyErrorRecord, DetectorObservation, ExperimentEvent, ExperimentRecord, Sample } from '../core/index.js';
import { systemClock, type Clock } from '../core/index.js';
import type {
  ConfigReadStore,
  ConfigReadSummary,
  CorpusStore,
  ErrorRecordStore,
  ExperimentStore,
  ObservationStore,
  OutcomeStore,
  ReadOptions,
  SampleStore,
  Store,
} from './store.js';
import type { ErrorRecordFilter } from './filters.js';
import { experimentRecordOf } from './record-guards.js';
import { pageOf, statusesOf, type ExperimentQuery } from './experiment-query.js';
import { ident, joinSql, qualified, sql, SqlFragment } from './sql.js';
import { assertName } from './names.js';
import { ADDED_COLUMNS, createStatements } from './clickhouse/clickhouse-schema.js';
import { Tables, parseJson, seconds } from './clickhouse/tables.js';
import { ClickHouseOutcomeStore } from './clickhouse/clickhouse-outcome-store.js';
import { ClickHouseCorpusStore } from './clickhouse/clickhouse-corpus-store.js';
import { ensureCorpusSummary } from './clickhouse/corpus-summary.js';
import { experimentRow, fillSummaryColumns } from './clickhouse/experiment-rows.js';
import { ClickHouseConnection } from './clickhouse/clickhouse-connection.js';

class ClickHouseSampleStore implements SampleStore {
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

class ClickHouseExperimentStore implements ExperimentStore {
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

class ClickHouseObservationStore implements ObservationStore {
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

class ClickHouseConfigReadStore implements ConfigReadStore {
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

class ClickHouseErrorRecordStore implements ErrorRecordStore {
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

/** Options of the ClickHouse backend. */
export interface ClickHouseStoreOptions {
  /** HTTP interface URL. @default "http://127.0.0.1:8123" */
  readonly url: string;
  /** @default "tandem" */
  readonly database: string;
  readonly username?: string;
  readonly password?: string;
  /** @default 30000 */
  readonly requestTimeoutMs?: number;
  /** Rows per insert request. @default 10000 */
  readonly batchRows?: number;
  /** @default systemClock */
  readonly clock?: Clock;
}

export class ClickHouseStore implements Store {
  readonly kind = 'clickhouse';
  readonly location: string;
  readonly corpus: CorpusStore;
  readonly samples: SampleStore;
  readonly outcomes: OutcomeStore;
  readonly experiments: ExperimentStore;
  readonly observations: ObservationStore;
  readonly configReads: ConfigReadStore;
  readonly errors: ErrorRecordStore;
  readonly #tables: Tables;

  constructor(options: ClickHouseStoreOptions) {
    const connection = new ClickHouseConnection({
      url: options.url,
      username: options.username ?? 'default',
      password: options.password ?? '',
      requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
      batchRows: options.batchRows ?? 10_000,
    });
    this.#tables = new Tables(connection, options.database, options.clock ?? systemClock);
    qualified(options.database, 'corpus'); // validates the database name now, not on first use
    this.location = `${options.url} (database ${options.database})`;
    this.corpus = new ClickHouseCorpusStore(this.#tables);
    this.samples = new ClickHouseSampleStore(this.#tables);
    this.outcomes = new ClickHouseOutcomeStore(this.#tables);
    this.experiments = new ClickHouseExperimentStore(this.#tables);
    this.observations = new ClickHouseObservationStore(this.#tables);
    this.configReads = new ClickHouseConfigReadStore(this.#tables);
    this.errors = new ClickHouseErrorRecordStore(this.#tables);
  }

  async init(): Promise<void> {
    for (const statement of createStatements(this.#tables.database)) await this.#tables.connection.command(statement);
    const { database, connection } = this.#tables;
    for (const added of ADDED_COLUMNS) {
      const present = await connection.rows<{ name: string }>(
        sql`SELECT name FROM system.columns WHERE database = ${database} AND table = ${added.table} AND name = ${added.column}`,
      );
      if (present.length === 0)
        await connection.command(new SqlFragment(`ALTER TABLE ${qualified(database, added.table).text} ADD COLUMN ${ident(added.column).text} ${added.type}`));
    }
    await fillSummaryColumns(this.#tables);
    await ensureCorpusSummary(this.#tables);
  }

  async close(): Promise<void> {
    await this.#tables.connection.close();
  }
}

export function createClickHouseStore(options: ClickHouseStoreOptions): ClickHouseStore {
  return new ClickHouseStore(options);
}
