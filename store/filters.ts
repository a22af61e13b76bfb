/**
 * Query semantics that backends without a query language (the local files)
 * evaluate in code. The ClickHouse backend expresses the same in SQL; the
 * contract suite holds both to one meaning.
 */
import type { ConfigRead, DependencyErrorRecord } from '../core/index.js';
import type { ConfigReadSummary } from './store.js';

export interface ErrorRecordFilter {
  readonly sinceMs: number;
  readonly untilMs?: number;
  readonly dependency?: string;
  readonly experimentId?: string;
  /** Matches a record whose `job` or any of whose `jobs` is in this list. */
  readonly jobs?: readonly string[];
}

export function matchesErrorFilter(record: DependencyErrorRecord, filter: ErrorRecordFilter): boolean {
  if (record.timeMs < filter.sinceMs) return false;
  if (filter.untilMs !== undefined && record.timeMs >= filter.untilMs) return false;
  if (filter.dependency !== undefined && record.dependency !== filter.dependency) return false;
  if (filter.experimentId !== undefined && record.experimentId !== filter.experimentId) return false;
  if (filter.jobs !== undefined) {
    const wanted = new Set(filter.jobs);
    if (!wanted.has(record.job) && !record.jobs.some((job) => wanted.has(job))) return false;
  }
  return true;
}

/** Latest read per (service, file, setting) at or after `sinceMs`, sorted by key. */
export async function latestConfigReads(
  reads: AsyncIterable<ConfigRead>,
  filter: { sinceMs: number; service?: string; file?: string },
): Promise<ConfigReadSummary[]> {
  const latest = new Map<string, ConfigReadSummary>();
  for await (const r of reads) {
    if (r.timeMs < filter.sinceMs) continue;
    if (filter.service !== undefined && r.service !== filter.service) continue;
    if (filter.file !== undefined && r.file !== filter.file) continue;
    const key = JSON.stringify([r.service, r.file, r.setting]);
    const known = latest.get(key);
    if (!known || known.lastReadMs < r.timeMs) latest.set(key, { service: r.service, file: r.file, setting: r.setting, lastReadMs: r.timeMs });
  }
  return [...latest.values()].sort((a, b) => compareKeys(a, b));
}

/** Plain code-unit order, as ClickHouse's byte order sorts the same keys. */
function compareKeys(a: ConfigReadSummary, b: ConfigReadSummary): number {
  for (const field of ['service', 'file', 'setting'] as const) {
    if (a[field] !== b[field]) return a[field] < b[field] ? -1 : 1;
  }
  return 0;
}
