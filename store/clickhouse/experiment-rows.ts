/**
 * An experiment record as a row of the `experiments` table, and the one-time
 * fill of the summary columns (kind, stage, change_id, outcome) for rows an
 * older Tandem wrote before those columns existed.
 */
import type { ExperimentRecord } from '../../core/index.js';
import { summarize } from '../experiment-query.js';
import { isExperimentRecord } from '../record-guards.js';
import { sql, SqlFragment } from '../sql.js';
import { parseJson, type Tables } from './tables.js';
import { UNSUMMARIZED_KIND } from './clickhouse-schema.js';

export function experimentRow(record: ExperimentRecord): Record<string, unknown> {
  const { kind, stage, change, outcome } = summarize(record);
  return {
    id: record.id,
    workload: record.workload,
    status: record.status,
    created_ms: record.createdAtMs,
    updated_ms: record.updatedAtMs,
    record: JSON.stringify(record),
    kind,
    stage,
    change_id: change,
    outcome,
  };
}

interface OlderRow {
  readonly id: string;
  readonly workload: string;
  readonly status: string;
  readonly created_ms: string;
  readonly updated_ms: string;
  readonly record: string;
}

/**
 * Writes each older row again with its summary columns, at the same version (`updated_ms`): the
 * ReplacingMergeTree keeps the last row inserted among equal versions, and a newer write by a worker
 * meanwhile still wins. Then collapses the table, so the next `init` finds nothing to fill with one cheap
 * count. Returns how many rows it filled.
 */
export async function fillSummaryColumns(tables: Tables): Promise<number> {
  const experiments = tables.table('experiments');
  const [pending] = await tables.connection.rows<{ n: string }>(sql`SELECT count() AS n FROM ${experiments} WHERE kind = ${UNSUMMARIZED_KIND}`);
  if (Number(pending?.n ?? 0) === 0) return 0;
  const rows = await tables.connection.rows<OlderRow>(
    sql`SELECT id, workload, status, created_ms, updated_ms, record FROM ${experiments} FINAL WHERE kind = ${UNSUMMARIZED_KIND}`,
  );
  const filled = rows.map((row) => {
    const record = parseJson<unknown>(row.record, null);
    // A row whose record does not parse is written again as it was, with empty summary columns: listed
    // unfiltered as before, and no longer waiting to be filled.
    return isExperimentRecord(record) && record.id === row.id
      ? experimentRow(record)
      : { ...row, created_ms: Number(row.created_ms), updated_ms: Number(row.updated_ms), kind: '', stage: '', change_id: '', outcome: '' };
  });
  await tables.connection.insert(experiments, filled);
  await tables.connection.command(new SqlFragment(`OPTIMIZE TABLE ${experiments.text} FINAL`));
  return filled.length;
}
