/**
 * A running experiment as it is in the store right now: trial and phase,
 * pairs/s, drops and errors per arm (the replay's `progress` events), each
 * critical metric's estimate and interval after every look (the `look`
 * events), the detector checks against their thresholds with the warm-up and
 * the run of consecutive violations, and any cancellation with its reason.
 * Rendered on the server, escaped here; pushed whole on every change.
 */
import type { DetectorConfig, DetectorObservation, ExperimentEvent, ExperimentRecord } from '../core/index.js';
import { escapeHtml as e, formatEffect, intervalChartSpec } from '../harness/index.js';
import type { LookMetric } from '../executor/index.js';
import { chartElement, statusBadge, time } from './page-shell.js';

export interface LiveSnapshot {
  readonly record: ExperimentRecord;
  readonly events: readonly ExperimentEvent[];
  readonly observations: readonly DetectorObservation[];
  /** The workload's detectors from the config, for thresholds, warm-up and consecutive counts. */
  readonly detectors: readonly DetectorConfig[];
}

const num = (value: unknown): number => (typeof value === 'number' ? value : Number.NaN);
const fixed = (value: unknown, digits = 1): string => (Number.isFinite(num(value)) ? num(value).toFixed(digits) : 'n/a');
const perArm = (value: unknown, arm: 'control' | 'treatment'): unknown =>
  value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[arm] : undefined;

function progressSection(record: ExperimentRecord, events: readonly ExperimentEvent[]): string {
  const running = [...record.trials].reverse().find((t) => t.status === 'running');
  const progress = [...events]
    .reverse()
    .find((ev) => ev.type === 'progress' && (running === undefined || (ev.data?.trial === running.index && ev.data?.attempt === running.attempt)));
  const completed = record.trials.filter((t) => t.status === 'completed').length;
  const design = (record.spec.design ?? {}) as { minTrials?: unknown; maxTrials?: unknown };
  const d = progress?.data ?? {};
  const phase =
    running === undefined
      ? record.status === 'queued'
        ? 'queued'
        : 'between trials'
      : progress === undefined
        ? 'deploying'
        : d.phase === 'warmup'
          ? 'warm-up'
          : 'measuring';
  const cards = [
    ['Trial', running ? `${running.index + 1} (attempt ${running.attempt})` : '–'],
    ['Phase', phase],
    ['Completed trials', `${completed}${design.maxTrials !== undefined ? ` of at most ${String(design.maxTrials)}` : ''}`],
    ['Pairs/s', progress ? fixed(d.rate) : '–'],
    ['Pairs sent', progress ? String(d.sentPairs ?? 0) : '–'],
    ['Dropped pairs', progress ? String(d.droppedPairs ?? 0) : '–'],
    ['Errors control / treatment', progress ? `${String(perArm(d.errors, 'control') ?? 0)} / ${String(perArm(d.errors, 'treatment') ?? 0)}` : '–'],
    ['In flight control / treatment', progress ? `${String(perArm(d.inflight, 'control') ?? 0)} / ${String(perArm(d.inflight, 'treatment') ?? 0)}` : '–'],
  ];
  const remaining =
    progress && Number.isFinite(num(d.remainingMs))
      ? `<p class="meta">trial ${e((running?.index ?? 0) + 1)}: ${e(fixed(num(d.elapsedMs) / 1000))} s in, ${e(fixed(num(d.remainingMs) / 1000))} s left; progress at ${e(time(progress.timeMs))}</p>`
      : '';
  return `<div class="cards">${cards.map(([label, value]) => `<div class="card"><div class="meta">${e(label)}</div><div class="value">${e(value)}</div></div>`).join('')}</div>${remaining}`;
}

function looksSection(events: readonly ExperimentEvent[]): string {
  const looks = events
    .filter((ev) => ev.type === 'look')
    .map((ev) => ({
      trials: num(ev.data?.trials),
      decided: ev.data?.decided === true,
      outcome: String(ev.data?.outcome ?? ''),
      metrics: (Array.isArray(ev.data?.metrics) ? ev.data.metrics : []) as LookMetric[],
    }));
  if (looks.length === 0)
    return '<h2>Critical metrics</h2><p class="empty">No look yet: the sequential judge looks after each completed trial from the first look on.</p>';
  const names = [...new Set(looks.flatMap((l) => l.metrics.filter((m) => m.critical).map((m) => m.metric)))];
  const last = looks[looks.length - 1]!;
  const blocks = names.map((name) => {
    const rows = looks.flatMap((l) => l.metrics.filter((m) => m.metric === name).map((m) => ({ look: l, m })));
    const latest = rows[rows.length - 1]!.m;
    const chart = intervalChartSpec(
      `${name} after each look`,
      rows.map(({ look, m }) => ({ label: `after ${look.trials} trials`, estimate: m.estimate, low: m.low, high: m.high })),
      0,
      latest.scale,
    );
    return `<h3>${e(name)}: ${e(formatEffect(latest.estimate, latest.scale))} [${e(formatEffect(latest.low, latest.scale))}, ${e(formatEffect(latest.high, latest.scale))}] <span class="status">${e(latest.verdict)}</span></h3>${chartElement(chart, `${name} after each look`)}`;
  });
  return `<h2>Critical metrics</h2><p>After ${e(last.trials)} trial(s): ${last.decided ? `decided, <strong>${e(last.outcome)}</strong>` : 'undecided, next trial'}.</p>${blocks.join('')}`;
}

function detectorsSection(snapshot: LiveSnapshot): string {
  const names = [...new Set([...snapshot.detectors.map((d) => d.name), ...snapshot.observations.map((o) => o.detector)])];
  if (names.length === 0) return '';
  const rows = names.map((name) => {
    const config = snapshot.detectors.find((d) => d.name === name);
    const checks = snapshot.observations.filter((o) => o.detector === name);
    let run = 0;
    for (const o of checks) run = o.verdict === 'violation' ? run + 1 : o.verdict === 'clear' ? 0 : run;
    const skipped = checks.filter((o) => o.verdict === 'skipped').length;
    const last = checks[checks.length - 1];
    const threshold = config ? `${config.rule.compare} > ${config.rule.above}` : '';
    const lastText = last
      ? `${last.verdict}${last.value !== null ? ` (${fixed(last.value, 3)})` : ''} at ${time(last.timeMs)}${last.message ? `: ${last.message}` : ''}`
      : 'no check yet';
    return `<tr><td>${e(name)}</td><td>${e(threshold)}</td><td class="n">${e(checks.length)}</td><td class="n">${e(skipped)}${config ? ` <span class="meta">(warm-up ${e(config.warmup / 1000)} s)</span>` : ''}</td><td class="n ${run > 0 ? 'bad' : ''}">${e(run)}${config ? ` of ${e(config.consecutive)}` : ''}</td><td>${e(lastText)}</td></tr>`;
  });
  return `<h2>Detector checks</h2><table><thead><tr><th scope="col">Detector</th><th scope="col">Violation when</th><th scope="col">Checks</th><th scope="col">Skipped in warm-up</th><th scope="col">Violations in a row</th><th scope="col">Last check</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function cancellationBanner(record: ExperimentRecord, events: readonly ExperimentEvent[]): string {
  const requested = events.find((ev) => ev.type === 'cancel-requested');
  const byMonitor = events.find((ev) => ev.type === 'cancelled-by-monitor');
  const parts: string[] = [];
  if (byMonitor) parts.push(`cancelled by a detector at ${time(byMonitor.timeMs)}: ${byMonitor.message ?? ''}`);
  if (requested) parts.push(`cancel requested at ${time(requested.timeMs)}: ${requested.message ?? ''}`);
  if (record.status === 'cancelled' && record.reason && parts.length === 0) parts.push(`cancelled: ${record.reason}`);
  return parts.length > 0 ? `<p class="banner bad" role="alert">${parts.map((p) => e(p)).join('<br>')}</p>` : '';
}

function trialsTable(record: ExperimentRecord): string {
  if (record.trials.length === 0) return '';
  const rows = record.trials
    .map(
      (t) =>
        `<tr><td>${e(t.index + 1)}</td><td>${e(t.attempt)}</td><td>${e(t.status)}</td><td class="n">${e(t.details?.achievedRate ?? '')}</td><td class="n">${e(typeof t.details?.otherWorkOnArmCpus === 'number' ? `${Math.round(t.details.otherWorkOnArmCpus * 100)}%` : '')}</td><td>${e(time(t.startedAtMs))}</td><td>${e(t.reason ?? '')}</td></tr>`,
    )
    .join('');
  return `<h2>Trials</h2><table><thead><tr><th scope="col">Trial</th><th scope="col">Attempt</th><th scope="col">Status</th><th scope="col">Pairs/s</th><th scope="col">Other work on the arms' CPUs</th><th scope="col">Started (UTC)</th><th scope="col">Reason</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function livePanel(snapshot: LiveSnapshot): string {
  const { record, events } = snapshot;
  return `<p>${statusBadge(record.status)} <span class="meta">updated ${e(time(record.updatedAtMs))}</span></p>${cancellationBanner(record, events)}${progressSection(record, events)}${looksSection(events)}${detectorsSection(snapshot)}${trialsTable(record)}`;
}

/**
 * The cancel form of a running or queued experiment, rendered once with the page and outside the live region.
 * The region is replaced whole on every change (a progress event every 2 s or so while a trial runs, and one at
 * each phase), which wiped a reason being typed and could swap the button between a click's press and release,
 * so that the click never fired. The page's script removes the form when the live stream ends (`data-live-only`).
 */
export function cancelForm(record: ExperimentRecord): string {
  if (record.status !== 'running' && record.status !== 'queued') return '';
  return `<div class="actions" id="experiment-actions" data-live-only><label>Reason <input id="cancel-reason" maxlength="200" size="30"></label> <button type="button" class="danger" data-action="/api/experiments/${encodeURIComponent(record.id)}/cancel">Cancel experiment</button></div>`;
}
