/**
 * `corpus ls` from metadata: a materialized view adds every inserted batch
 * of corpus records to corpus_tiers as aggregate states per tier and UTC
 * hour (count, first and last time, bytes), in the same INSERT; a listing
 * merges a few rows per tier-hour instead of reading the tier. Pruning drops
 * whole hours from the summary and recounts the one hour it cut through.
 *
 * Exact except in two windows that need a writer and a maintenance step at
 * the same moment: records inserted while the first `init` of a store made
 * by an older Tandem backfills the summary (counted twice), and records of
 * the cut hour inserted while a prune recounts it.
 */
import { joinSql, qualified, sql, SqlFragment } from '../sql.js';
import type { Tables } from './tables.js';

export const HOUR_MS = 3_600_000;

const STATES = 'countState() AS records, minState(time_ms) AS first_ms, maxState(time_ms) AS last_ms, sumState(size_bytes) AS bytes';

function summarySelect(t: Tables, where?: SqlFragment): SqlFragment {
  return sql`SELECT tier, intDiv(time_ms, ${HOUR_MS}) AS hour, ${new SqlFragment(STATES)} FROM ${t.table('corpus')}${where ? sql` WHERE ${where}` : new SqlFragment('')} GROUP BY tier, hour`;
}

/** Create the view when it is missing; a store that already held records has them summarized once. */
export async function ensureCorpusSummary(t: Tables): Promise<void> {
  const view = await t.connection.rows<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${t.database} AND name = 'corpus_tiers_mv'`);
  if (view.length > 0) return;
  await t.connection.command(
    sql`CREATE MATERIALIZED VIEW IF NOT EXISTS ${qualified(t.database, 'corpus_tiers_mv')} TO ${t.table('corpus_tiers')} AS ${summarySelect(t)}`,
  );
  await t.connection.command(sql`INSERT INTO ${t.table('corpus_tiers')} ${summarySelect(t)}`);
}

/** After records before `beforeMs` were deleted: whole hours leave the summary, the hour cut through is recounted. */
export async function pruneCorpusSummary(t: Tables, beforeMs: number, tier: string | undefined, awaitMutations: () => Promise<void>): Promise<void> {
  const cutHour = Math.floor(beforeMs / HOUR_MS);
  const ofTier = tier !== undefined ? [sql`tier = ${tier}`] : [];
  await t.connection.command(sql`ALTER TABLE ${t.table('corpus_tiers')} DELETE WHERE ${joinSql([sql`hour <= ${cutHour}`, ...ofTier], ' AND ')}`);
  await awaitMutations();
  await t.connection.command(
    sql`INSERT INTO ${t.table('corpus_tiers')} ${summarySelect(t, joinSql([sql`intDiv(time_ms, ${HOUR_MS}) = ${cutHour}`, ...ofTier], ' AND '))}`,
  );
}

/** Per tier: records, first and last time, bytes. */
export function tierSummaryQuery(t: Tables): SqlFragment {
  return sql`SELECT tier, countMerge(records) AS count, minMerge(first_ms) AS first_ms, maxMerge(last_ms) AS last_ms, sumMerge(bytes) AS bytes FROM ${t.table('corpus_tiers')} GROUP BY tier HAVING count > 0 ORDER BY tier`;
}
