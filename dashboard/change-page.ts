/**
 * Why a change selected what it did: for a stored submission (`tandem
 * submit --base`), each experiment with the reasons and dependency paths the
 * selection gave (its `selected` event), and the workloads it skipped.
 */
import type { ExperimentEvent, ExperimentRecord } from '../core/index.js';
import { escapeHtml as e } from '../harness/index.js';
import { changeOf } from '../store/index.js';
import { statusBadge, time } from './page-shell.js';
import type { DashboardContext } from './context.js';

interface StoredReason {
  readonly kind?: string;
  readonly message?: string;
  readonly file?: string;
  readonly path?: readonly string[];
}

const reasonsOf = (event: ExperimentEvent | undefined): StoredReason[] => (Array.isArray(event?.data?.reasons) ? (event.data.reasons as StoredReason[]) : []);

function reasonList(reasons: readonly StoredReason[]): string {
  if (reasons.length === 0) return '<span class="meta">submitted by name (no selection stored)</span>';
  return `<ul>${reasons.map((r) => `<li><span class="tag">${e(r.kind ?? '')}</span> ${e(r.message ?? '')}${r.file ? ` <code>${e(r.file)}</code>` : ''}${Array.isArray(r.path) && r.path.length > 1 ? `<br><span class="meta">path: ${r.path.map((p) => e(p)).join(' → ')}</span>` : ''}</li>`).join('')}</ul>`;
}

export async function changesBody(ctx: DashboardContext): Promise<string> {
  const recent = await ctx.store.experiments.list({ limit: 500 });
  const changes = new Map<string, ExperimentRecord[]>();
  for (const r of recent) {
    const change = changeOf(r);
    if (change !== '') changes.set(change, [...(changes.get(change) ?? []), r]);
  }
  const rows = [...changes.entries()]
    .slice(0, 100)
    .map(
      ([change, records]) =>
        `<tr><td><a href="/changes/${encodeURIComponent(change)}">${e(change)}</a></td><td class="n">${e(records.length)}</td><td>${records.map((r) => statusBadge(r.status)).join(' ')}</td><td>${e(time(Math.max(...records.map((r) => r.createdAtMs))))}</td></tr>`,
    );
  return `<h1>Changes</h1><p class="meta">Changes among the newest 500 experiments.</p><table><thead><tr><th scope="col">Change</th><th scope="col">Experiments</th><th scope="col">Statuses</th><th scope="col">Latest (UTC)</th></tr></thead><tbody>${rows.join('') || '<tr><td colspan="4" class="empty">No experiment names a change.</td></tr>'}</tbody></table>`;
}

export async function changeBody(ctx: DashboardContext, change: string): Promise<string | undefined> {
  const records = await ctx.store.experiments.list({ change, limit: 200 });
  if (records.length === 0) return undefined;
  const selections = await Promise.all(records.map(async (r) => ({ r, selected: (await ctx.store.experiments.events(r.id, { types: ['selected'] })).at(-1) })));
  const base = selections.find((s) => s.selected?.data?.base)?.selected?.data?.base;
  const skipped = selections.map((s) => s.selected?.data?.skipped).find((x) => Array.isArray(x)) as { workload?: string; reason?: StoredReason }[] | undefined;
  const rows = selections.map(
    ({ r, selected }) =>
      `<tr><td><a href="/workloads/${encodeURIComponent(r.workload)}">${e(r.workload)}</a></td><td><a href="/experiments/${encodeURIComponent(r.id)}">${e(r.id)}</a> <span class="meta">${e(String(r.spec.stage ?? ''))}</span></td><td>${statusBadge(r.status)}</td><td>${r.status === 'deferred' ? e(r.reason ?? '') : reasonList(reasonsOf(selected))}</td></tr>`,
  );
  const skippedList =
    skipped && skipped.length > 0
      ? `<h2>Not selected</h2><ul>${skipped.map((s) => `<li>${e(s.workload ?? '')}: <span class="tag">${e(s.reason?.kind ?? '')}</span> ${e(s.reason?.message ?? '')}</li>`).join('')}</ul>`
      : '';
  return `<h1>Change ${e(change)}</h1><p class="meta">${base !== undefined ? `compared with ${e(String(base))} · ` : ''}${e(records.length)} experiment(s)</p><h2>Why each workload was selected</h2><table><thead><tr><th scope="col">Workload</th><th scope="col">Experiment</th><th scope="col">Status</th><th scope="col">Reasons and paths</th></tr></thead><tbody>${rows.join('')}</tbody></table>${skippedList}`;
}
