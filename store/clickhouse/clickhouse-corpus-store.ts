/**
 * Recorded requests in ClickHouse, sorted by tier and time. A lookback window
 * is read in consecutive time slices, each one sorted query: ClickHouse 18.16
 * sorts a whole result before sending its first row, so one query over a
 * 10M-record window made a replay wait for the sort of every record in it;
 * the first slice is a minute, and slices grow while they stay small.
 */
import { StoreError, type CorpusRecord } from '../../core/index.js';
import type { CorpusStore, CorpusTierSummary, ReadOptions } from '../store.js';
import { isCorpusRecord } from '../record-guards.js';
import { joinSql, sql, SqlFragment } from '../sql.js';
import { assertName, assertRecordTime } from '../names.js';
import type { TableName } from './clickhouse-schema.js';
import { parseJson, seconds, type Tables } from './tables.js';
import { pruneCorpusSummary, tierSummaryQuery } from './corpus-summary.js';

/** The first slice of a window; later slices grow or shrink toward SLICE_ROWS records. */
const FIRST_SLICE_MS = 60_000;
const SLICE_ROWS = 50_000;
interface CorpusRow {
  tier: string;
  time_ms: string;
  id: string;
  method: string;
  path: string;
  headers: string;
  body: string;
  body_truncated: number;
  sample_rate: number;
  sample_mode: string;
  grpc: string;
}

export class ClickHouseCorpusStore implements CorpusStore {
  constructor(readonly t: Tables) {}

  async append(records: readonly CorpusRecord[]): Promise<void> {
    for (const r of records) {
      assertName(r.tier, 'corpus record tier');
      assertRecordTime(r.timeMs, `corpus record ${r.id} time`);
    }
    await this.t.connection.insert(
      this.t.table('corpus'),
      records.map((r) => ({
        tier: r.tier,
        time: seconds(r.timeMs),
        time_ms: r.timeMs,
        id: r.id,
        method: r.method,
        path: r.path,
        headers: JSON.stringify(r.headers),
        body: r.body,
        // 2 marks a withheld body (not stored because it could not be redacted); both skip replay.
        body_truncated: r.bodyWithheld === true ? 2 : r.bodyTruncated ? 1 : 0,
        sample_rate: r.sampleRate,
        sample_mode: r.sampleMode,
        size_bytes: r.body.length + r.path.length + (r.grpc ? r.grpc.responseMessages.reduce((n, m) => n + m.length, 0) : 0),
        grpc: r.grpc ? JSON.stringify(r.grpc) : '',
      })),
    );
  }

  async *read(tier: string, options: ReadOptions & { sinceMs: number; untilMs?: number; limit?: number }): AsyncIterable<CorpusRecord> {
    const tierCondition = sql`tier = ${assertName(tier, 'tier')}`;
    const until = options.untilMs !== undefined ? Math.max(0, Math.ceil(options.untilMs)) : undefined;
    let remaining = options.limit !== undefined ? Math.max(0, Math.floor(options.limit)) : Number.POSITIVE_INFINITY;
    let from = Math.max(0, Math.floor(options.sinceMs));
    let span = FIRST_SLICE_MS;
    // Without an end, slices run to a day past now and one open-ended query takes whatever lies beyond.
    const sliceEnd = until ?? this.t.clock.now() + 86_400_000;
    while (remaining > 0) {
      const last = from + span >= sliceEnd;
      const to = last ? until : from + span;
      const conditions = [tierCondition, sql`time_ms >= ${from}`, ...(to !== undefined ? [sql`time_ms < ${to}`] : [])];
      const limit = Number.isFinite(remaining) ? sql` LIMIT ${remaining}` : new SqlFragment('');
      const query = sql`SELECT tier, time_ms, id, method, path, headers, body, body_truncated, sample_rate, sample_mode, grpc FROM ${this.t.table('corpus')} WHERE ${joinSql(conditions, ' AND ')} ORDER BY time_ms, id${limit}`;
      let rows = 0;
      for await (const row of this.t.connection.stream<CorpusRow>(query, options.signal)) {
        rows++;
        remaining--;
        const record = corpusRecordOf(row);
        if (isCorpusRecord(record)) yield record;
        else options.onCorrupt?.(`corpus row ${row.id}`, 'headers are not a JSON object, or its gRPC answer is malformed');
      }
      if (last || to === undefined) return;
      from = to;
      // Slices of about SLICE_ROWS records: an empty or sparse stretch is crossed in a few growing steps (years in seven), a dense one in many small sorts.
      if (rows === 0) span *= 16;
      else if (rows < SLICE_ROWS / 2) span *= 2;
      else if (rows > SLICE_ROWS * 2) span = Math.max(1_000, Math.floor(span / 2));
    }
  }

  /** From the summary the materialized view keeps (corpus-summary.ts): a few rows per tier and hour, never the records. */
  async tiers(options: ReadOptions = {}): Promise<CorpusTierSummary[]> {
    const rows = await this.t.connection.rows<{ tier: string; count: string; first_ms: string; last_ms: string; bytes: string }>(
      tierSummaryQuery(this.t),
      options.signal,
    );
    return rows.map((r) => ({ tier: r.tier, count: Number(r.count), firstMs: Number(r.first_ms), lastMs: Number(r.last_ms), bytes: Number(r.bytes) }));
  }

  async prune(beforeMs: number, tier?: string): Promise<number> {
    const conditions = [sql`time_ms < ${Math.max(0, Math.floor(beforeMs))}`];
    if (tier !== undefined) conditions.push(sql`tier = ${tier}`);
    const where = joinSql(conditions, ' AND ');
    const [row] = await this.t.connection.rows<{ n: string }>(sql`SELECT count() AS n FROM ${this.t.table('corpus')} WHERE ${where}`);
    const count = Number(row?.n ?? 0);
    if (count === 0) return 0;
    await this.t.connection.command(sql`ALTER TABLE ${this.t.table('corpus')} DELETE WHERE ${where}`);
    await this.#awaitMutations('corpus');
    await pruneCorpusSummary(this.t, beforeMs, tier, () => this.#awaitMutations('corpus_tiers'));
    return count;
  }

  /** ALTER … DELETE is asynchronous, and 18.16 has no `mutations_sync`: wait for it with a deadline. */
  async #awaitMutations(table: TableName): Promise<void> {
    const deadline = this.t.clock.now() + 60_000;
    for (;;) {
      const [row] = await this.t.connection.rows<{ n: string }>(
        sql`SELECT count() AS n FROM system.mutations WHERE database = ${this.t.database} AND table = ${table} AND is_done = 0`,
      );
      if (Number(row?.n ?? 0) === 0) return;
      if (this.t.clock.now() > deadline) throw new StoreError(`ClickHouse at ${this.t.connection.url}: delete on ${table} did not finish within 60 s`);
      await this.t.clock.sleep(50);
    }
  }
}

function corpusRecordOf(row: CorpusRow): Record<string, unknown> {
  return {
    id: row.id,
    tier: row.tier,
    timeMs: Number(row.time_ms),
    method: row.method,
    path: row.path,
    headers: parseJson<unknown>(row.headers, null),
    body: row.body,
    bodyTruncated: Number(row.body_truncated) >= 1,
    ...(Number(row.body_truncated) === 2 ? { bodyWithheld: true } : {}),
    sampleRate: Number(row.sample_rate),
    sampleMode: row.sample_mode,
    ...(row.grpc !== '' ? { grpc: parseJson<unknown>(row.grpc, null) } : {}),
  };
}
