/**
 * Workloads: for each, the verdict history across changes, the A/A noise
 * floor, slot bias and false-positive rate across calibrations, corpus size
 * and age per tier, and the trials the sequential judge needed.
 */
import type { ExperimentRecord } from '../core/index.js';
import { escapeHtml as e, formatEffect, lineChartSpec, type Calibration } from '../harness/index.js';
import { changeOf } from '../store/index.js';
import { chartElement, statusBadge, time } from './page-shell.js';
import type { DashboardContext } from './context.js';

const HISTORY = 100;
const JUDGED = ['passed', 'regressed', 'inconclusive'] as const;

export async function workloadsBody(ctx: DashboardContext): Promise<string> {
  const rows = await Promise.all(
    ctx.workloads.map(async (w) => {
      const [latest] = await ctx.store.experiments.list({ workload: w.name, kind: 'experiment', limit: 1 });
      const total = await ctx.store.experiments.count({ workload: w.name });
      return `<tr><td><a href="/workloads/${encodeURIComponent(w.name)}">${e(w.name)}</a></td><td>${e(w.tier)}</td><td class="n">${e(total)}</td><td>${latest ? `${statusBadge(latest.status)} <a href="/experiments/${encodeURIComponent(latest.id)}">${e(time(latest.createdAtMs))}</a>` : '<span class="meta">none</span>'}</td></tr>`;
    }),
  );
  return `<h1>Workloads</h1><table><thead><tr><th scope="col">Workload</th><th scope="col">Tier</th><th scope="col">Experiments</th><th scope="col">Latest experiment</th></tr></thead><tbody>${rows.join('') || '<tr><td colspan="4" class="empty">No workload in the config.</td></tr>'}</tbody></table>`;
}

const criticalEffect = (r: ExperimentRecord): string => {
  const metrics = Array.isArray(r.verdict?.metrics)
    ? (r.verdict.metrics as { metric?: string; critical?: boolean; estimate?: number; scale?: 'relative' | 'absolute'; policy?: { critical?: boolean } }[])
    : [];
  return metrics
    .filter((m) => m.critical === true || m.policy?.critical === true)
    .map((m) => `${m.metric ?? ''} ${formatEffect(Number(m.estimate), m.scale ?? 'relative')}`)
    .join('; ');
};

function changeLink(record: ExperimentRecord): string {
  const change = changeOf(record);
  return change ? `<a href="/changes/${encodeURIComponent(change)}">${e(change.slice(0, 12))}</a>` : '';
}

function history(records: readonly ExperimentRecord[]): string {
  if (records.length === 0) return '<p class="empty">No experiment of this workload yet.</p>';
  const rows = records
    .map(
      (r) =>
        `<tr><td><a href="/experiments/${encodeURIComponent(r.id)}">${e(time(r.createdAtMs))}</a></td><td>${changeLink(r)}</td><td>${e(String(r.spec.stage ?? ''))}</td><td>${statusBadge(r.status)}</td><td>${e(criticalEffect(r))}</td><td class="n">${e(r.trials.filter((t) => t.status === 'completed').length)}</td></tr>`,
    )
    .join('');
  return `<table><thead><tr><th scope="col">Created (UTC)</th><th scope="col">Change</th><th scope="col">Stage</th><th scope="col">Status</th><th scope="col">Critical effects</th><th scope="col">Trials</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function budget(records: readonly ExperimentRecord[], maxTrials: number): string {
  const judged = records
    .filter((r) => (JUDGED as readonly string[]).includes(r.status))
    .map((r) => r.trials.filter((t) => t.status === 'completed').length)
    .filter((n) => n > 0);
  if (judged.length === 0) return '<p class="empty">No judged experiment yet.</p>';
  const sorted = [...judged].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const atMax = judged.filter((n) => n >= maxTrials).length;
  const chart = lineChartSpec(
    'trials needed per experiment (oldest to newest)',
    [{ name: 'completed trials', color: '#1f77b4', points: [...judged].reverse().map((n, i) => [i + 1, n] as const) }],
    'experiment',
    { yDomain: [0, Math.max(maxTrials, ...judged)] },
  );
  return `<p>Over the last ${e(judged.length)} judged experiment(s): median ${e(at(0.5))} trials, 90th percentile ${e(at(0.9))}, most ${e(sorted[sorted.length - 1])}; ${e(atMax)} reached the maximum of ${e(maxTrials)}.</p>${chartElement(chart, 'trials needed')}`;
}

function calibrations(records: readonly ExperimentRecord[]): string {
  const found = records
    .map((r) => ({ r, c: r.verdict?.calibration as Calibration | undefined }))
    .filter((x): x is { r: ExperimentRecord; c: Calibration } => x.c !== undefined && typeof x.c === 'object');
  if (found.length === 0) return '<p class="empty">No A/A calibration yet.</p>';
  const rows = found.flatMap(({ r, c }) =>
    Object.entries(c.metrics ?? {}).map(([metric, m]) => {
      const scale = metric.includes('share') || metric.includes('rate') ? 'absolute' : 'relative';
      return `<tr><td><a href="/experiments/${encodeURIComponent(r.id)}">${e(time(c.createdAtMs))}</a></td><td>${e(metric)}</td><td class="n">${e(formatEffect(m.noiseFloor, scale))}</td><td>${e(formatEffect(m.slotBias.estimate, scale))} [${e(formatEffect(m.slotBias.low, scale))}, ${e(formatEffect(m.slotBias.high, scale))}]</td><td class="n">${e(Number.isFinite(m.slotBias.pValue) ? m.slotBias.pValue.toPrecision(2) : 'n/a')}</td><td class="n">${e(`${(m.falsePositiveRate * 100).toFixed(1)}%`)}</td></tr>`;
    }),
  );
  const overall = found
    .map(
      ({ r, c }) =>
        `<li><a href="/experiments/${encodeURIComponent(r.id)}">${e(time(c.createdAtMs))}</a>: ${e(c.trials)} trials, false-positive rate ${e((c.falsePositiveRate * 100).toFixed(1))}%${c.falsePositiveInterval ? ` [${e((c.falsePositiveInterval.low * 100).toFixed(1))}%, ${e((c.falsePositiveInterval.high * 100).toFixed(1))}%]` : ''} over ${e(c.subsets)} sequential A/A experiments simulated from it (design ${e(c.design.minTrials)}–${e(c.design.maxTrials)} trials)${Object.entries(
          c.metrics,
        )
          .filter(([, m]) => m.warning)
          .map(([metric, m]) => `; <strong>${e(metric)}</strong>: ${e(m.warning!)}`)
          .join('')}</li>`,
    )
    .join('');
  return `<ul>${overall}</ul><table><thead><tr><th scope="col">Calibrated (UTC)</th><th scope="col">Metric</th><th scope="col">Noise floor</th><th scope="col">Slot bias [95% CI]</th><th scope="col">p</th><th scope="col">False positives</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export async function workloadBody(ctx: DashboardContext, name: string): Promise<string | undefined> {
  const workload = ctx.workload(name);
  const total = await ctx.store.experiments.count({ workload: name });
  if (!workload && total === 0) return undefined;
  // `tandem calibrate` and an A/A run through the queue (periodic, or from this page) both store kind calibration.
  const [experiments, calibrationRecords, tiers] = await Promise.all([
    ctx.store.experiments.list({ workload: name, kind: 'experiment', limit: HISTORY }),
    ctx.store.experiments.list({ workload: name, kind: 'calibration', status: 'completed', limit: 20 }),
    ctx.store.corpus.tiers(),
  ]);
  const tier = workload?.tier ?? name;
  const now = ctx.clock.now();
  const corpus = tiers
    .filter((t) => t.tier === tier)
    .map(
      (t) =>
        `<tr><td>${e(t.tier)}</td><td class="n">${e(t.count)}</td><td class="n">${e((t.bytes / 1_048_576).toFixed(1))} MiB</td><td>${e(time(t.firstMs))} (${e(((now - t.firstMs) / 86_400_000).toFixed(1))} days old)</td><td>${e(time(t.lastMs))} (${e(((now - t.lastMs) / 3_600_000).toFixed(1))} h ago)</td></tr>`,
    )
    .join('');
  const calibrate =
    ctx.actions && workload
      ? `<div class="actions"><button type="button" data-action="/api/workloads/${encodeURIComponent(name)}/calibrate">Start an A/A calibration</button> <span class="meta">control against control, queued at stage periodic</span></div>`
      : '';
  return `<h1>Workload ${e(name)}</h1><p class="meta">tier ${e(tier)} · ${e(total)} experiment(s) in the store · <a href="/?workload=${encodeURIComponent(name)}">all its experiments</a></p>${calibrate}
<h2>Verdict history</h2>${history(experiments)}
<h2>Trials the sequential judge needed</h2>${budget(experiments, workload?.trials.max ?? Number.NaN)}
<h2>A/A calibrations: noise floor, slot bias, false positives</h2>${calibrations(calibrationRecords)}
<h2>Corpus</h2>${corpus ? `<table><thead><tr><th scope="col">Tier</th><th scope="col">Records</th><th scope="col">Size</th><th scope="col">Oldest</th><th scope="col">Newest</th></tr></thead><tbody>${corpus}</tbody></table>` : `<p class="empty">No corpus recorded for tier ${e(tier)}.</p>`}`;
}
