/**
 * Tables of the ClickHouse backend. Valid on ClickHouse 18.16 and current
 * servers: no DateTime64 (epoch ms in UInt64 plus a DateTime for partitions),
 * no LowCardinality, no TTL (pruning is an explicit DELETE), JSON documents as
 * String. Sort keys follow the reads: per tier by time, per experiment by
 * metric and time, per dependency by time.
 */
import { qualified, ident, SqlFragment } from '../sql.js';

/**
 * What `kind` reads on a row written before the column was added (the column's default there, see
 * ADDED_COLUMNS): no record has this kind, so the rows still to fill are found without parsing records,
 * and a fill cut short by a kill is finished by the next `init`.
 */
export const UNSUMMARIZED_KIND = '(written by an older tandem)';

export const TABLES = [
  'corpus',
  'corpus_tiers',
  'samples',
  'outcomes',
  'experiments',
  'experiment_events',
  'observations',
  'config_reads',
  'error_records',
] as const;
export type TableName = (typeof TABLES)[number];

const DEFINITIONS: Readonly<Record<TableName, string>> = {
  corpus: `(
    tier String, time DateTime, time_ms UInt64, id String, method String, path String,
    headers String, body String, body_truncated UInt8, sample_rate Float64, sample_mode String, size_bytes UInt64,
    grpc String DEFAULT ''
  ) ENGINE = MergeTree() PARTITION BY toYYYYMMDD(time) ORDER BY (tier, time_ms, id)`,
  // Per tier and UTC hour: what `corpus ls` shows, kept by corpus_tiers_mv as records are inserted (corpus-summary.ts).
  corpus_tiers: `(
    tier String, hour UInt64, records AggregateFunction(count), first_ms AggregateFunction(min, UInt64),
    last_ms AggregateFunction(max, UInt64), bytes AggregateFunction(sum, UInt64)
  ) ENGINE = AggregatingMergeTree() ORDER BY (tier, hour)`,
  samples: `(
    experiment_id String, trial UInt32, arm String, metric String, time DateTime, time_ms UInt64, value Float64, labels String
  ) ENGINE = MergeTree() PARTITION BY toYYYYMM(time) ORDER BY (experiment_id, metric, time_ms)`,
  outcomes: `(
    experiment_id String, trial UInt32, attempt UInt32, arm String, record_id String, time DateTime, intended_ms Float64,
    latency_ms Float64, status UInt16, bytes UInt64, error_class String, body_hash String, first UInt8, body String,
    response String DEFAULT '', process Int32 DEFAULT -1, grpc_status Int32 DEFAULT -2
  ) ENGINE = MergeTree() PARTITION BY toYYYYMM(time) ORDER BY (experiment_id, trial, intended_ms, arm)`,
  // ReplacingMergeTree keeps the row with the highest updated_ms per id; reads use FINAL.
  experiments: `(
    id String, workload String, status String, created_ms UInt64, updated_ms UInt64, record String,
    kind String DEFAULT '', stage String DEFAULT '', change_id String DEFAULT '', outcome String DEFAULT ''
  ) ENGINE = ReplacingMergeTree(updated_ms) ORDER BY id`,
  experiment_events: `(
    experiment_id String, time_ms UInt64, seq UInt64, type String, message String, data String
  ) ENGINE = MergeTree() ORDER BY (experiment_id, time_ms, seq)`,
  observations: `(
    experiment_id String, detector String, time_ms UInt64, value Nullable(Float64), baseline Nullable(Float64), verdict String, message String
  ) ENGINE = MergeTree() ORDER BY (experiment_id, detector, time_ms)`,
  config_reads: `(
    service String, file String, setting String, time DateTime, time_ms UInt64
  ) ENGINE = MergeTree() PARTITION BY toYYYYMMDD(time) ORDER BY (service, file, setting, time_ms)`,
  error_records: `(
    time DateTime, time_ms UInt64, dependency String, shard String, kind String, message String,
    experiment_id String, arm String, trial String, job String, jobs Array(String)
  ) ENGINE = MergeTree() PARTITION BY toYYYYMMDD(time) ORDER BY (dependency, time_ms)`,
};

/** Statements that create the database and every table; each is idempotent. */
export function createStatements(database: string): SqlFragment[] {
  return [
    new SqlFragment(`CREATE DATABASE IF NOT EXISTS ${ident(database).text}`),
    ...TABLES.map((table) => new SqlFragment(`CREATE TABLE IF NOT EXISTS ${qualified(database, table).text} ${DEFINITIONS[table]}`)),
  ];
}

/**
 * Columns added after a table's first release: `init` adds each one a table
 * made by an older Tandem lacks (looked up in system.columns — `ADD COLUMN IF
 * NOT EXISTS` is not in every server Tandem supports). Existing rows read the default.
 */
export const ADDED_COLUMNS: readonly { readonly table: TableName; readonly column: string; readonly type: string }[] = [
  { table: 'outcomes', column: 'response', type: "String DEFAULT ''" },
  // Which of the arm's processes answered (trials.processes); -1: one process, or an older Tandem.
  { table: 'outcomes', column: 'process', type: 'Int32 DEFAULT -1' },
  // A gRPC call's answer (the corpus) and status (outcomes); '' and -2: not a gRPC call, or an older Tandem.
  { table: 'corpus', column: 'grpc', type: "String DEFAULT ''" },
  { table: 'outcomes', column: 'grpc_status', type: 'Int32 DEFAULT -2' },
  // Summary fields a listing filters on (store/experiment-query.ts). Rows of an older Tandem read the defaults
  // until `init` fills them from their records (experiment-rows.ts), which it finds by their `kind`.
  { table: 'experiments', column: 'kind', type: `String DEFAULT '${UNSUMMARIZED_KIND}'` },
  ...['stage', 'change_id', 'outcome'].map((column) => ({ table: 'experiments' as const, column, type: "String DEFAULT ''" })),
];
