/**
 * The experiments list: filterable by workload, kind, stage, status, outcome,
 * change and creation time, paged by the store (never loaded whole), its rows
 * kept live over server-sent events.
 */
import { InputError, type ExperimentRecord, type ExperimentStatus } from '../core/index.js';
import { changeOf, type ExperimentQuery } from '../store/index.js';
import { escapeHtml as e } from '../harness/index.js';
import { href, statusBadge, time } from './page-shell.js';

export const PAGE_SIZE = 50;
const STATUSES: readonly ExperimentStatus[] = ['queued', 'running', 'passed', 'regressed', 'inconclusive', 'completed', 'cancelled', 'failed', 'deferred'];
const STAGES = ['diff', 'land', 'release', 'periodic'];
const KINDS = ['experiment', 'calibration', 'replay', 'capacity', 'noop'];
const OUTCOMES = ['passed', 'regressed', 'inconclusive', 'no data'];
const TEXT_FILTERS = ['workload', 'change'] as const;
/** Filter values are names or change ids: bounded, printable. */
const TEXT_VALUE = /^[\x21-\x7e]{1,200}$/;

export interface ListRequest {
  readonly query: ExperimentQuery;
  readonly page: number;
  /** The filters as given, for the form and the links. */
  readonly params: Readonly<Record<string, string>>;
}

function parseTime(value: string, name: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms))
    throw new InputError(`${name} must be a date or time such as 2026-12-01 or 2026-12-01T10:00Z, got ${JSON.stringify(value.slice(0, 60))}`);
  return ms;
}

function oneOf(value: string, allowed: readonly string[], name: string): string {
  if (!allowed.includes(value)) throw new InputError(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value.slice(0, 60))}`);
  return value;
}

/** The list's filters from the URL; a bad one is a 400 naming it. */
export function parseListRequest(search: URLSearchParams): ListRequest {
  const known = new Set(['workload', 'change', 'status', 'stage', 'kind', 'outcome', 'since', 'until', 'page']);
  for (const key of search.keys())
    if (!known.has(key)) throw new InputError(`unknown filter ${JSON.stringify(key.slice(0, 60))} (known: ${[...known].join(', ')})`);
  const params: Record<string, string> = {};
  for (const key of known) {
    const value = search.get(key)?.trim();
    if (value) params[key] = value;
  }
  for (const name of TEXT_FILTERS)
    if (params[name] !== undefined && !TEXT_VALUE.test(params[name]!)) throw new InputError(`${name} must be 1-200 printable characters without spaces`);
  // Decimal digits only: Number() would also read `0x10`, `1e3` and ` 2 `.
  const page = params.page === undefined ? 1 : /^\d{1,7}$/.test(params.page) ? Number(params.page) : Number.NaN;
  if (!Number.isInteger(page) || page < 1 || page > 1_000_000)
    throw new InputError(`page must be a whole number from 1, got ${JSON.stringify(params.page!.slice(0, 20))}`);
  const query: ExperimentQuery = {
    ...(params.workload !== undefined ? { workload: params.workload } : {}),
    ...(params.change !== undefined ? { change: params.change } : {}),
    ...(params.status !== undefined ? { status: oneOf(params.status, STATUSES, 'status') as ExperimentStatus } : {}),
    ...(params.stage !== undefined ? { stage: oneOf(params.stage, STAGES, 'stage') } : {}),
    ...(params.kind !== undefined ? { kind: oneOf(params.kind, KINDS, 'kind') } : {}),
    ...(params.outcome !== undefined ? { outcome: oneOf(params.outcome, OUTCOMES, 'outcome') } : {}),
    ...(params.since !== undefined ? { sinceMs: parseTime(params.since, 'since') } : {}),
    ...(params.until !== undefined ? { untilMs: parseTime(params.until, 'until') } : {}),
    limit: PAGE_SIZE,
    offset: (page - 1) * PAGE_SIZE,
  };
  return { query, page, params };
}

const verdictText = (r: ExperimentRecord): string => {
  const outcome = r.verdict?.outcome;
  return typeof outcome === 'string' ? outcome : '';
};

const trialCount = (r: ExperimentRecord): number => r.trials.filter((t) => t.status === 'completed').length;

/** The table body: also what the live stream pushes when a row changes. */
export function listRows(records: readonly ExperimentRecord[]): string {
  if (records.length === 0) return '<tr><td colspan="8" class="empty">No experiment matches these filters.</td></tr>';
  return records
    .map((r) => {
      const change = changeOf(r);
      return `<tr data-id="${e(r.id)}"><td><a href="/experiments/${encodeURIComponent(r.id)}">${e(r.id)}</a></td><td><a href="/workloads/${encodeURIComponent(r.workload)}">${e(r.workload)}</a></td><td>${e(String(r.spec.kind ?? ''))} ${e(String(r.spec.stage ?? ''))}</td><td>${change ? `<a href="/changes/${encodeURIComponent(change)}">${e(change.slice(0, 12))}</a>` : ''}</td><td>${statusBadge(r.status)}</td><td>${e(verdictText(r))}${r.reason ? ` <span class="meta">${e(r.reason.slice(0, 120))}</span>` : ''}</td><td class="n">${e(trialCount(r))}</td><td>${e(time(r.createdAtMs))}</td></tr>`;
    })
    .join('\n');
}

function select(name: string, label: string, values: readonly string[], current: string | undefined): string {
  return `<label>${e(label)}<select name="${name}"><option value="">any</option>${values.map((v) => `<option${v === current ? ' selected' : ''}>${e(v)}</option>`).join('')}</select></label>`;
}

export function listBody(request: ListRequest, records: readonly ExperimentRecord[], total: number, workloads: readonly string[]): string {
  const p = request.params;
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const form = `<form class="filters" method="get" action="/" aria-label="Filter experiments">
${select('workload', 'Workload', workloads, p.workload)}${select('kind', 'Kind', KINDS, p.kind)}${select('stage', 'Stage', STAGES, p.stage)}${select('status', 'Status', STATUSES, p.status)}${select('outcome', 'Outcome', OUTCOMES, p.outcome)}
<label>Change<input name="change" value="${e(p.change ?? '')}" size="14"></label><label>Created since<input name="since" type="date" value="${e(p.since ?? '')}"></label><label>Created before<input name="until" type="date" value="${e(p.until ?? '')}"></label>
<button type="submit">Filter</button> <a href="/">Clear</a></form>`;
  const link = (page: number): string => href('/', { ...p, page: page === 1 ? undefined : page });
  const pager = `<nav class="pager" aria-label="Pages"><span>${e(total)} experiment(s) · page ${e(request.page)} of ${e(pages)}</span>${request.page > 1 ? `<a href="${e(link(request.page - 1))}" rel="prev">Newer</a>` : ''}${request.page < pages ? `<a href="${e(link(request.page + 1))}" rel="next">Older</a>` : ''}</nav>`;
  const live = href('/live/list', { ...p });
  return `<h1>Experiments</h1>${form}${pager}
<table><thead><tr><th scope="col">Experiment</th><th scope="col">Workload</th><th scope="col">Kind, stage</th><th scope="col">Change</th><th scope="col">Status</th><th scope="col">Verdict</th><th scope="col">Trials</th><th scope="col">Created (UTC)</th></tr></thead>
<tbody data-live="${e(live)}">${listRows(records)}</tbody></table>`;
}
