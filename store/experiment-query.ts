/**
 * Which experiments a listing asks for, and the summary fields it filters
 * on. The local files evaluate a query in code over their summary index; the
 * ClickHouse backend expresses the same in SQL over columns written with each
 * record. The contract suite holds both to one meaning.
 */
import type { ExperimentRecord, ExperimentStatus } from '../core/index.js';

export interface ExperimentQuery {
  readonly workload?: string;
  /** One status, or any of several. */
  readonly status?: ExperimentStatus | readonly ExperimentStatus[];
  /** `spec.kind`: experiment, aa, calibration, replay, capacity… */
  readonly kind?: string;
  /** `spec.stage`: diff, land, release, periodic. */
  readonly stage?: string;
  /** The change under test: `spec.change`, or `spec.request.change` (what the executor's records keep). */
  readonly change?: string;
  /** `verdict.outcome`. */
  readonly outcome?: string;
  /** Created at or after. */
  readonly sinceMs?: number;
  /** Created before. */
  readonly untilMs?: number;
  readonly limit?: number;
  /** Skip this many of the matching experiments (newest first) before `limit`. */
  readonly offset?: number;
}

/** The fields of a record a query filters on; empty strings where the record has none. */
export interface ExperimentSummary {
  readonly id: string;
  readonly workload: string;
  readonly status: ExperimentStatus;
  readonly kind: string;
  readonly stage: string;
  readonly change: string;
  readonly outcome: string;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The change an experiment tested: `spec.change` (replays, fixtures), or its request's (experiments the executor made). */
export function changeOf(record: ExperimentRecord): string {
  const request = record.spec.request;
  return text(record.spec.change) || (request !== null && typeof request === 'object' ? text((request as Record<string, unknown>).change) : '');
}

export function summarize(record: ExperimentRecord): ExperimentSummary {
  return {
    id: record.id,
    workload: record.workload,
    status: record.status,
    kind: text(record.spec.kind),
    stage: text(record.spec.stage),
    change: changeOf(record),
    outcome: text(record.verdict?.outcome),
    createdAtMs: record.createdAtMs,
    updatedAtMs: record.updatedAtMs,
  };
}

export function statusesOf(query: ExperimentQuery): readonly ExperimentStatus[] | undefined {
  if (query.status === undefined) return undefined;
  return typeof query.status === 'string' ? [query.status as ExperimentStatus] : (query.status as readonly ExperimentStatus[]);
}

export function matchesQuery(summary: ExperimentSummary, query: ExperimentQuery): boolean {
  const statuses = statusesOf(query);
  if (statuses !== undefined && !statuses.includes(summary.status)) return false;
  if (query.workload !== undefined && summary.workload !== query.workload) return false;
  if (query.kind !== undefined && summary.kind !== query.kind) return false;
  if (query.stage !== undefined && summary.stage !== query.stage) return false;
  if (query.change !== undefined && summary.change !== query.change) return false;
  if (query.outcome !== undefined && summary.outcome !== query.outcome) return false;
  if (query.sinceMs !== undefined && summary.createdAtMs < query.sinceMs) return false;
  if (query.untilMs !== undefined && summary.createdAtMs >= query.untilMs) return false;
  return true;
}

/** Newest first; the id breaks ties (descending, as ClickHouse's `ORDER BY created_ms DESC, id DESC`). */
export function newestFirst(a: { createdAtMs: number; id: string }, b: { createdAtMs: number; id: string }): number {
  return b.createdAtMs - a.createdAtMs || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** `offset` and `limit` as whole non-negative numbers. */
export function pageOf(query: ExperimentQuery): { offset: number; limit: number | undefined } {
  const whole = (n: number | undefined): number | undefined => (n === undefined ? undefined : Math.max(0, Math.floor(n)));
  return { offset: whole(query.offset) ?? 0, limit: whole(query.limit) };
}
