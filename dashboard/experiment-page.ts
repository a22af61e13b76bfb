/**
 * One experiment. Running or queued: the live panel, followed over
 * server-sent events until it ends, when the same region becomes the
 * finished view. Finished: everything the HTML report has (the verdict,
 * metrics, intervals, detector checks, response differences side by side,
 * fan-out per dependency), its charts drawn by the page's ECharts. A capacity
 * test shows its timeline.
 */
import type { ExperimentRecord } from '../core/index.js';
import { comparedText, escapeHtml as e, lineChartSpec, reportSections, type ExperimentReport } from '../harness/index.js';
import { changeOf } from '../store/index.js';
import { chartElement, statusBadge, time } from './page-shell.js';
import { cancelForm, livePanel } from './live-panel.js';
import type { DashboardContext } from './context.js';

const TERMINAL = new Set(['passed', 'regressed', 'inconclusive', 'completed', 'cancelled', 'failed', 'deferred']);

export const isFinished = (record: ExperimentRecord): boolean => TERMINAL.has(record.status);

function header(record: ExperimentRecord): string {
  const compared = comparedText(record.spec);
  const change = changeOf(record) || undefined;
  return `<h1>${e(record.workload)} <span class="meta">${e(record.id)}</span></h1>
<p class="meta">${e(String(record.spec.kind ?? 'experiment'))}${record.spec.stage ? ` · stage ${e(String(record.spec.stage))}` : ''}${change ? ` · change <a href="/changes/${encodeURIComponent(change)}">${e(change)}</a>` : ''}${compared ? ` · ${e(compared)}` : ''} · created ${e(time(record.createdAtMs))} · seed ${e(record.seed)} · <a href="/workloads/${encodeURIComponent(record.workload)}">workload history</a></p>`;
}

export async function capacityView(ctx: DashboardContext, record: ExperimentRecord): Promise<string> {
  const series = new Map<string, [number, number][]>();
  for await (const s of ctx.store.samples.read(record.id, { arm: 'capacity' })) {
    if (!series.has(s.metric)) series.set(s.metric, []);
    series.get(s.metric)!.push([s.timeMs, s.value]);
  }
  const start = Math.min(...[...series.values()].flatMap((points) => points.map((p) => p[0])));
  const seconds = (name: string): [number, number][] => (series.get(name) ?? []).map(([t, v]) => [(t - start) / 1000, v]);
  const summary = (record.verdict?.summary ?? {}) as Record<string, unknown>;
  const traffic = lineChartSpec(
    'traffic, load-factor and lattice state',
    [
      { name: 'target rate (req/s)', color: '#1f77b4', points: seconds('target_rate') },
      { name: 'sent per bucket', color: '#17becf', points: seconds('sent') },
    ],
    'seconds',
  );
  const state = lineChartSpec(
    'load-factor and state',
    [
      { name: 'product load-factor', color: '#ff7f0e', points: seconds('product_load_factor') },
      { name: 'lattice state (index)', color: '#d62728', points: seconds('lattice_state') },
    ],
    'seconds',
  );
  const quality = lineChartSpec(
    'quality and no-result share',
    [
      { name: 'quality (NDCG vs L0)', color: '#2ca02c', points: seconds('quality') },
      { name: 'no-result share', color: '#8c564b', points: seconds('no_result_share') },
      { name: 'errors per bucket', color: '#7f7f7f', points: seconds('errors') },
    ],
    'seconds',
  );
  const facts = Object.entries(summary)
    .filter(([, v]) => typeof v === 'number' || typeof v === 'string')
    .map(([k, v]) => `<tr><th scope="row">${e(k)}</th><td>${e(typeof v === 'number' ? Number(v.toPrecision(4)) : v)}</td></tr>`)
    .join('');
  return `<p>${statusBadge(record.status)} ${record.spec.coordinated === true ? 'coordinated' : 'uncoordinated'} · lattice ${e(String(record.spec.lattice ?? ''))}</p><table>${facts}</table>${chartElement(traffic, 'traffic')}${chartElement(state, 'load-factor and state')}${chartElement(quality, 'quality')}`;
}

function finishedView(record: ExperimentRecord, report: ExperimentReport | Error): string {
  const stored = typeof record.verdict?.outcome === 'string' ? record.verdict.outcome : undefined;
  const headline = `<p>${statusBadge(record.status)}${stored ? ` · stored verdict <strong>${e(stored)}</strong>` : ''}${record.reason ? ` · ${e(record.reason)}` : ''} <span class="meta">ended ${e(time(record.updatedAtMs))}</span></p>`;
  if (report instanceof Error) return `${headline}<p class="bad">The report could not be built: ${e(report.message)}</p>`;
  // The stored verdict is what CI gated on; a re-judgement that differs is said, never silently shown instead.
  const differs =
    stored !== undefined && report.verdict.outcome !== stored
      ? `<p class="banner warn">Judged again now, the data says <strong>${e(report.verdict.outcome)}</strong>; the stored verdict is <strong>${e(stored)}</strong> (judged with the config and calibration of that time).</p>`
      : '';
  return `${headline}${differs}${reportSections(report, chartElement, { headline: 'h2' }).join('\n')}`;
}

/** The content of the experiment's live region: the live panel, or the finished view once it has ended. */
export async function experimentContent(ctx: DashboardContext, record: ExperimentRecord): Promise<string> {
  if (record.spec.kind === 'capacity') return capacityView(ctx, record);
  if (!isFinished(record)) {
    const [events, observations] = await Promise.all([ctx.store.experiments.events(record.id), ctx.store.observations.read(record.id)]);
    return livePanel({ record, events, observations, detectors: ctx.workload(record.workload)?.detectors ?? [] });
  }
  if (record.status === 'deferred' || record.trials.length === 0) return finishedView(record, new Error('no trial ran'));
  return finishedView(record, await ctx.report(record).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error)))));
}

export async function experimentBody(ctx: DashboardContext, record: ExperimentRecord): Promise<string> {
  const running = !isFinished(record);
  const live = running ? ` data-live="/live/experiments/${encodeURIComponent(record.id)}"` : '';
  const actions = running && ctx.actions !== undefined && record.spec.kind !== 'capacity' ? cancelForm(record) : '';
  return `${header(record)}${actions}<section id="live" aria-label="Experiment"${live}>${await experimentContent(ctx, record)}</section>`;
}
