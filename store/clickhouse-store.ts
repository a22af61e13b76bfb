/**
 * The ClickHouse backend, for corpora and time series at scale and for
 * sharing one store between many `tandem worker` machines. Rows go in as
 * JSONEachRow; every value in a WHERE clause goes through store/sql.ts.
 */
import { systemClock, type Clock } from '../core/index.js';
import type { ConfigReadStore, CorpusStore, ErrorRecordStore, ExperimentStore, ObservationStore, OutcomeStore, SampleStore, Store } from './store.js';
import { ident, qualified, sql, SqlFragment } from './sql.js';
import { ADDED_COLUMNS, createStatements } from './clickhouse/clickhouse-schema.js';
import { Tables } from './clickhouse/tables.js';
import { ClickHouseOutcomeStore } from './clickhouse/clickhouse-outcome-store.js';
import { ClickHouseCorpusStore } from './clickhouse/clickhouse-corpus-store.js';
import { ClickHouseSampleStore } from './clickhouse/clickhouse-sample-store.js';
import { ClickHouseExperimentStore } from './clickhouse/clickhouse-experiment-store.js';
import { ClickHouseObservationStore } from './clickhouse/clickhouse-observation-store.js';
import { ClickHouseConfigReadStore } from './clickhouse/clickhouse-config-read-store.js';
import { ClickHouseErrorRecordStore } from './clickhouse/clickhouse-error-record-store.js';
import { ensureCorpusSummary } from './clickhouse/corpus-summary.js';
import { fillSummaryColumns } from './clickhouse/experiment-rows.js';
import { ClickHouseConnection } from './clickhouse/clickhouse-connection.js';

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
