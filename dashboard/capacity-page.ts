/**
 * Capacity tests and the lattice: the latest coordinated and uncoordinated
 * tests of each workload side by side (HiLO's comparison), every capacity
 * test, and each configured lattice controller's current state and recent
 * decisions (stored by `tandem lattice serve` under `lattice-<name>`).
 */
import type { ExperimentRecord, LatticeConfig } from '../core/index.js';
import { escapeHtml as e, lineChartSpec } from '../harness/index.js';
import { chartElement, statusBadge, time } from './page-shell.js';
import { capacityView } from './experiment-page.js';
import type { DashboardContext } from './context.js';

async function controller(ctx: DashboardContext, lattice: LatticeConfig): Promise<string> {
  const id = `lattice-${lattice.name}`;
  const decisions = await ctx.store.experiments.events(id, { types: ['decision'] });
  if (decisions.length === 0)
    return `<h3>${e(lattice.name)}</h3><p class="empty">No decision stored (run <code>tandem lattice serve --lattice ${e(lattice.name)}</code>).</p>`;
  const last = decisions[decisions.length - 1]!;
  const points = { loadFactor: [] as [number, number][], state: [] as [number, number][] };
  for await (const s of ctx.store.samples.read(id, { arm: 'controller' }))
    (s.metric === 'lattice_state' ? points.state : s.metric === 'product_load_factor' ? points.loadFactor : []).push([s.timeMs, s.value]);
  const start = Math.min(...points.state.map((p) => p[0]), ...points.loadFactor.map((p) => p[0]));
  const rel = (list: [number, number][]): [number, number][] => list.slice(-2_000).map(([t, v]) => [(t - start) / 1000, v]);
  const chart = lineChartSpec(
    `controller ${lattice.name}: load-factor and state`,
    [
      { name: 'product load-factor', color: '#ff7f0e', points: rel(points.loadFactor) },
      { name: `state index (0 = ${lattice.states[0]?.name ?? ''})`, color: '#d62728', points: rel(points.state) },
    ],
    'seconds',
  );
  const rows = decisions
    .slice(-20)
    .reverse()
    .map(
      (d) =>
        `<tr><td>${e(time(d.timeMs))}</td><td>${e(d.message ?? '')}</td><td class="n">${e(typeof d.data?.productLoadFactor === 'number' ? d.data.productLoadFactor.toFixed(3) : 'n/a')}</td></tr>`,
    )
    .join('');
  return `<h3>${e(lattice.name)}: state <strong>${e(String(last.data?.state ?? ''))}</strong> <span class="meta">decided ${e(time(last.timeMs))}</span></h3>${chartElement(chart, 'controller')}<table><thead><tr><th scope="col">Decided (UTC)</th><th scope="col">Decision</th><th scope="col">Load-factor</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export async function capacityBody(ctx: DashboardContext): Promise<string> {
  const tests = await ctx.store.experiments.list({ kind: 'capacity', limit: 100 });
  const byWorkload = new Map<string, { coordinated?: ExperimentRecord; uncoordinated?: ExperimentRecord }>();
  for (const t of tests) {
    const entry = byWorkload.get(t.workload) ?? {};
    const key = t.spec.coordinated === true ? 'coordinated' : 'uncoordinated';
    entry[key] ??= t;
    byWorkload.set(t.workload, entry);
  }
  const pairs = await Promise.all(
    [...byWorkload.entries()].map(async ([workload, { coordinated, uncoordinated }]) => {
      const side = async (label: string, record: ExperimentRecord | undefined): Promise<string> =>
        `<div><h3>${e(label)}</h3>${record ? `<p class="meta"><a href="/experiments/${encodeURIComponent(record.id)}">${e(record.id)}</a> · ${e(time(record.createdAtMs))}</p>${await capacityView(ctx, record)}` : '<p class="empty">none stored</p>'}</div>`;
      return `<h2>${e(workload)}: coordinated and uncoordinated</h2><div class="side-by-side">${await side('coordinated', coordinated)}${await side('uncoordinated', uncoordinated)}</div>`;
    }),
  );
  const list = tests
    .map(
      (t) =>
        `<tr><td><a href="/experiments/${encodeURIComponent(t.id)}">${e(t.id)}</a></td><td>${e(t.workload)}</td><td>${e(String(t.spec.lattice ?? ''))}</td><td>${t.spec.coordinated === true ? 'coordinated' : 'uncoordinated'}</td><td>${statusBadge(t.status)}</td><td>${e(time(t.createdAtMs))}</td></tr>`,
    )
    .join('');
  const controllers = await Promise.all(ctx.lattices.map((l) => controller(ctx, l)));
  return `<h1>Capacity tests and the lattice</h1><h2>Lattice controllers</h2>${controllers.join('') || '<p class="empty">No lattice in the config.</p>'}${pairs.join('')}<h2>All capacity tests</h2>${list ? `<table><thead><tr><th scope="col">Test</th><th scope="col">Workload</th><th scope="col">Lattice</th><th scope="col">Mode</th><th scope="col">Within target</th><th scope="col">Created (UTC)</th></tr></thead><tbody>${list}</tbody></table>` : '<p class="empty">No capacity test stored (run <code>tandem capacity</code>).</p>'}`;
}
