/**
 * The HTML report: one self-contained page (inline CSS and SVG, no script,
 * no external asset) with the verdict, the metrics table, and the charts a
 * person would rather look at than read (drawn by ECharts, charts.ts) — latency CDF per arm, per-trial
 * effects with their intervals, detector checks over time with the
 * cancellation marked, fan-out per dependency. Every value is escaped:
 * recorded bodies and names can contain markup.
 */
import type { ExperimentReport } from '../checks/evaluate.js';
import { formatEffect } from '../wording.js';
import { escapeHtml as e } from './escape.js';
import { intervalHeading, sequentialText } from './sequential-text.js';
import { metricValue } from './metric-value.js';
import { comparedText, fieldName } from './compared-text.js';
import { headlineOf } from './headline.js';
import { shapeChange } from './shape-text.js';
import { barChartSpec, intervalChartSpec, lineChartSpec, renderChartSvg, type ChartSpec } from './charts.js';

/** Draws a chart: inline SVG in the static report, a `data-chart` element the dashboard's script draws. */
export type DrawChart = (spec: ChartSpec | undefined, title: string) => string;

const svgChart: DrawChart = (spec, title) => (spec ? renderChartSvg(spec) : `<p class="empty">${e(title)}: no data</p>`);

const COLORS = { control: '#1f77b4', treatment: '#d62728' } as const;
const VERDICT_CLASS: Readonly<Record<string, string>> = { regression: 'bad', improvement: 'good', 'no change': 'ok', inconclusive: 'warn', 'no data': 'warn' };

const number = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

function metricsTable(report: ExperimentReport, judged: boolean): string {
  const rows = report.metrics.filter((m) => m.judged === judged);
  if (rows.length === 0) return '';
  const body = rows
    .map(
      (m) =>
        `<tr><td>${e(m.metric)}${m.policy?.critical ? ' <span class="tag">critical</span>' : ''}</td><td class="n">${e(metricValue(m, m.control))}</td><td class="n">${e(metricValue(m, m.treatment))}</td><td class="n">${e(formatEffect(m.estimate, m.scale))}</td><td>[${e(formatEffect(m.low, m.scale))}, ${e(formatEffect(m.high, m.scale))}]</td><td class="n">${e(Number.isFinite(m.adjustedP) ? m.adjustedP.toPrecision(2) : Number.isFinite(m.pValue) ? m.pValue.toPrecision(2) : 'n/a')}</td><td class="n">${e(formatEffect(m.minimumDetectableEffect, m.scale))}</td><td class="${VERDICT_CLASS[m.verdict] ?? ''}">${e(m.verdict)}</td><td class="why">${e(m.reason)}</td></tr>`,
    )
    .join('\n');
  return `<table><thead><tr><th>Metric</th><th>Control</th><th>Treatment</th><th>Effect</th><th>${e(intervalHeading(report.verdict.alpha))}</th><th>${judged ? 'adj. p' : 'p'}</th><th>MDE</th><th>Verdict</th><th>Why</th></tr></thead><tbody>${body}</tbody></table>`;
}

type Comparison = NonNullable<ExperimentReport['comparison']>;

/** What reached each dependency, per arm: the evidence that the guardrails held (blocked and refused calls, calls per target). */
function guardrailSection(report: ExperimentReport, draw: DrawChart): string {
  const attributed = report.fanout.filter((f) => f.fanOut !== null);
  const chart =
    attributed.length > 0
      ? draw(
          barChartSpec(
            'calls per replayed request',
            attributed.map((f) => ({
              label: `${f.dependency} (${f.policy}) ${f.arm}`,
              value: f.fanOut!,
              color: f.arm === 'treatment' ? COLORS.treatment : COLORS.control,
            })),
            'calls/request',
          ),
          'calls per replayed request',
        )
      : '';
  const rows = report.fanout
    .map((f) => {
      const targets = Object.entries(f.byTarget ?? {})
        .map(([target, calls]) => `<code>${e(target)}</code> ${e(calls)}`)
        .join(', ');
      const fanOut = f.fanOut === null ? '<span class="warn">unknown</span>' : e(number(f.fanOut, 2));
      return `<tr><td>${e(f.dependency)}</td><td>${e(f.policy)}</td><td>${e(f.arm)}</td><td class="n">${e(f.calls)}</td><td class="n">${e(f.errors)}</td><td class="n">${e(f.blocked)}</td><td class="n">${e(f.refused ?? 0)}</td><td>${targets}</td><td class="n">${fanOut}</td></tr>`;
    })
    .join('');
  const unknown = report.fanout.some((f) => f.fanOut === null)
    ? '<p class="meta">Fan-out is unknown where the service did not forward <code>x-tandem-record</code> on its downstream calls (forward the identity headers to attribute calls to requests; see docs/guardrails.md).</p>'
    : '';
  return `<h2>Dependencies (guardrails)</h2><table><thead><tr><th>Dependency</th><th>Policy</th><th>Arm</th><th>Calls</th><th>Errors</th><th>Writes blocked</th><th>Refused</th><th>Calls per target</th><th>Calls/request</th></tr></thead><tbody>${rows}</tbody></table>${unknown}${chart}`;
}

function coverageLine(c: Comparison): string {
  const skipped = Object.entries(c.skipped).sort((a, b) => b[1] - a[1]);
  const coverage = c.pairs > 0 ? c.comparedBodies / c.pairs : Number.NaN;
  return `<p>${e(c.pairs)} pairs · bodies compared in ${e(c.comparedBodies)} (${e(number(coverage * 100, 1))}%)${skipped.length > 0 ? ` · <span class="warn">not compared: ${skipped.map(([why, n]) => `${e(n)} ${e(why)}`).join('; ')}</span>` : ''} · ${e(c.statusMismatches)} status mismatch(es) · semantically equal ${e(number(c.semanticAgreement * 100, 1))}%${c.noiseCancellation ? ' · noise-cancelled with control′' : ''}</p>`;
}

/** Endpoints that differ, each with an example pair side by side; noise fields marked. */
function endpointSections(c: Comparison): string {
  const differing = c.endpoints.filter((x) => x.differing > 0);
  if (differing.length === 0) return c.endpoints.length > 0 ? `<p class="good">No endpoint differs (${e(c.endpoints.length)} endpoint(s) compared).</p>` : '';
  const rows = differing
    .map(
      (x) =>
        `<tr><td><code>${e(x.endpoint)}</code></td><td class="n">${e(x.pairs)}</td><td class="n">${e(number(x.share * 100, 1))}%</td><td class="n">${e(x.statusMismatches)}</td><td>${x.example && shapeChange(x.example.control.body, x.example.treatment.body, x.example.differingFields) ? `<strong>${e(shapeChange(x.example.control.body, x.example.treatment.body, x.example.differingFields))}</strong>; ` : ''}${x.fields.map((f) => `<code${f.counted ? '' : ' class="noise"'}>${e(fieldName(f.path))}</code> ${e(number(f.share * 100, 0))}%${f.counted ? '' : ' (noise)'}`).join(', ')}</td></tr>`,
    )
    .join('');
  const examples = differing
    .slice(0, 10)
    .filter((x) => x.example !== undefined)
    .map((x) => {
      const ex = x.example!;
      const marks = `${ex.differingFields.length > 0 ? `differs: ${ex.differingFields.map((f) => `<code>${e(f)}</code>`).join(', ')}` : ''}${ex.noiseFields.length > 0 ? ` · noise, not counted: ${ex.noiseFields.map((f) => `<code class="noise">${e(f)}</code>`).join(', ')}` : ''}`;
      return `<h3><code>${e(x.endpoint)}</code></h3><p class="meta">record ${e(ex.recordId)} · <code>${e(ex.request.method)} ${e(ex.request.path)}</code>${ex.request.body !== undefined ? ` · request body <code>${e(ex.request.body)}</code>` : ''}</p><p>${marks}</p><div class="pair"><div><strong>control</strong> ${e(ex.control.status)}<pre>${e(ex.control.body)}</pre></div><div><strong>treatment</strong> ${e(ex.treatment.status)}<pre>${e(ex.treatment.body)}</pre></div></div>`;
    })
    .join('\n');
  return `<table><thead><tr><th>Endpoint</th><th>Pairs</th><th>Differ</th><th>Status mismatches</th><th>Fields</th></tr></thead><tbody>${rows}</tbody></table>${examples}`;
}

/** The report's sections as HTML, every value escaped; `draw` decides how charts appear. */
export function reportSections(report: ExperimentReport, draw: DrawChart, options: { headline?: 'h1' | 'h2' } = {}): string[] {
  const h = options.headline ?? 'h1';
  const { experiment, verdict } = report;
  const compared = comparedText(experiment.spec);
  const sections: string[] = [];
  const headline = headlineOf(report);
  sections.push(`<${h}><span class="${headline.tone}">${e(headline.word)}</span> ${e(experiment.workload)}${compared !== undefined ? `: ${e(compared)}` : ''}</${h}>
<p class="meta">experiment ${e(experiment.id)} · status ${e(experiment.status)} · seed ${e(experiment.seed)} · ${e(verdict.trials)} trial(s) judged (${e(sequentialText(report))}) · α ${e(verdict.alpha)} · created ${e(experiment.createdAt)}</p>
${headline.stoppedBanner ? `<p class="banner bad"><strong>${e(headline.stoppedBanner)}</strong></p>` : ''}
${!report.stopped && (verdict.outcome === 'inconclusive' || verdict.inconclusivePolicy) ? `<p class="banner warn"><strong>Inconclusive${verdict.inconclusivePolicy === 'pass' ? ', passed only because the workload accepts inconclusive results' : verdict.inconclusivePolicy === 'fail' ? ', failed because the workload treats inconclusive results as failures' : ''}.</strong> ${verdict.undecided.map((u) => e(u)).join('; ')}</p>` : ''}
${report.stopped ? '' : `<ul>${verdict.reasons.map((r) => `<li>${e(r)}</li>`).join('')}</ul>`}`);
  if (report.cancellation) sections.push(`<p class="bad">Cancelled by detector ${e(report.cancellation.detector)}: ${e(report.cancellation.reason)}</p>`);
  sections.push(`<h2>Judged metrics</h2>${metricsTable(report, true) || '<p class="empty">none</p>'}`);

  sections.push(
    `<h2>Latency CDF</h2>${draw(
      lineChartSpec(
        'latency CDF per arm',
        (['control', 'treatment'] as const).map((arm) => ({
          name: `${arm} (p50 ${number(report.arms[arm].latencyMs.p50)} ms, p99 ${number(report.arms[arm].latencyMs.p99)} ms)`,
          color: COLORS[arm],
          points: report.latencyCdf[arm],
        })),
        'latency (ms)',
        { yDomain: [0, 1] },
      ),
      'latency CDF per arm',
    )}`,
  );

  const judged = report.metrics.filter((m) => m.judged && m.verdict !== 'no data');
  const perTrial = judged
    .map((m) => {
      const rows = report.perTrial
        .filter((t) => t.metric === m.metric)
        .map((t) => ({ label: `trial ${t.trial + 1}`, estimate: t.effect, low: t.low, high: t.high }));
      rows.push({ label: 'all trials', estimate: m.estimate, low: m.low, high: m.high });
      return `<h3>${e(m.metric)} <span class="${VERDICT_CLASS[m.verdict] ?? ''}">${e(m.verdict)}</span></h3>${draw(intervalChartSpec(`per-trial effects of ${m.metric}`, rows, m.policy?.threshold ?? 0, m.scale), `per-trial effects of ${m.metric}`)}`;
    })
    .join('\n');
  const narrowing = report.metrics
    .filter((m) => m.policy?.critical && m.looks.length > 1)
    .map(
      (m) =>
        `<h3>${e(m.metric)}</h3>${draw(
          intervalChartSpec(
            `${m.metric} after each look`,
            m.looks.map((l) => ({ label: `after ${l.trials} trials`, estimate: l.estimate, low: l.low, high: l.high })),
            m.policy?.threshold ?? 0,
            m.scale,
          ),
          `${m.metric} after each look`,
        )}`,
    )
    .join('\n');
  if (narrowing)
    sections.push(
      `<h2>How the intervals narrowed</h2><p class="meta">The estimate and its confidence-sequence interval (valid at every look) after each completed trial; the judge stopped when every critical metric was decided.</p>${narrowing}`,
    );
  sections.push(
    `<h2>Per-trial effects</h2><p class="meta">Dots are each trial's effect with its within-trial 95% interval; the last row is the estimate across trials. The green band is ±threshold.</p>${perTrial || '<p class="empty">no judged metric has data</p>'}`,
  );
  const processes = processTable(report);
  if (processes) sections.push(processes);

  if (report.detectors.length > 0) {
    const start = Math.min(...report.detectors.flatMap((d) => d.observations.map((o) => o.timeMs)));
    const palette = ['#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22'];
    const series = report.detectors.map((d, i) => ({
      name: d.name,
      color: palette[i % palette.length]!,
      points: d.observations.filter((o) => o.value !== null).map((o) => [(o.timeMs - start) / 1000, o.value!] as const),
    }));
    const markers = report.cancellation
      ? [{ x: (report.cancellation.terminatedMs - start) / 1000, label: `cancelled by ${report.cancellation.detector}` }]
      : [];
    const violations = report.detectors.flatMap((d) =>
      d.observations
        .filter((o) => o.verdict === 'violation')
        .map((o) => `<li>${e(d.name)} at +${e(((o.timeMs - start) / 1000).toFixed(1))} s: ${e(o.message ?? `value ${o.value}`)}</li>`),
    );
    sections.push(
      `<h2>Detector checks</h2>${draw(lineChartSpec('detector values over time', series, 'seconds since monitoring started', { markers }), 'detector values over time')}${violations.length > 0 ? `<details><summary>${violations.length} violation(s)</summary><ul>${violations.slice(0, 200).join('')}</ul></details>` : ''}`,
    );
  }

  if (report.fanout.length > 0) sections.push(guardrailSection(report, draw));

  if (report.comparison) {
    const c = report.comparison;
    const fields = c.fields
      .slice(0, 50)
      .map(
        (f) =>
          `<tr><td>${e(fieldName(f.path))}</td><td class="n">${e(number(f.rate * 100, 1))}%</td><td class="n">${e(Number.isFinite(f.noiseRate) ? `${number(f.noiseRate * 100, 1)}%` : 'n/a')}</td><td>${e(f.ignored === false ? 'counted' : `ignored (${f.ignored})`)}</td><td><code>${e(f.example.control)}</code> → <code>${e(f.example.treatment)}</code> <span class="meta">record ${e(f.example.recordId)}</span></td></tr>`,
      )
      .join('');
    const ranking = c.ranking
      ? `<p>Ranking (${e(c.ranking.pairs)} lists, against ${e(c.ranking.reference)}): NDCG@${e(c.ranking.k)} ${e(number(c.ranking.ndcg.mean, 4))} (min ${e(number(c.ranking.ndcg.min, 4))}), Kendall τ ${e(number(c.ranking.kendallTau.mean, 3))}, overlap@${e(c.ranking.k)} ${e(number(c.ranking.overlap.mean, 3))}${c.ranking.noise ? `; control′ vs control: NDCG ${e(number(c.ranking.noise.ndcg, 4))}` : ''}</p>`
      : '';
    sections.push(
      `<h2>Responses</h2>${coverageLine(c)}${ranking}${endpointSections(c)}${fields ? `<details><summary>All fields that differ</summary><table><thead><tr><th>Field</th><th>Differs</th><th>Noise (control′)</th><th></th><th>Example</th></tr></thead><tbody>${fields}</tbody></table></details>` : ''}`,
    );
  }

  if (report.finalChecks.length > 0)
    sections.push(
      `<h2>Final checks</h2><ul>${report.finalChecks.map((c) => `<li class="${c.ok ? 'good' : 'bad'}">${e(c.name)}: ${e(c.message)}</li>`).join('')}</ul>`,
    );
  const trials = report.trials
    .map(
      (t) =>
        `<tr><td>${e(t.index)}</td><td>${e(t.attempt)}</td><td>${e(t.status)}</td><td>${e(
          t.slots === undefined || t.slots === null || typeof t.slots !== 'object'
            ? ''
            : Object.entries(t.slots as Record<string, unknown>)
                .map(([arm, slot]) => `${arm} ${String(slot)}`)
                .join(', '),
        )}</td><td class="n">${e(t.achievedRate ?? '')}</td><td class="n">${e(t.otherWorkOnArmCpus === undefined ? '' : `${Math.round(t.otherWorkOnArmCpus * 100)}%`)}</td><td>${e(t.reason ?? '')}</td></tr>`,
    )
    .join('');
  sections.push(
    `<h2>Trials</h2><table><thead><tr><th>Trial</th><th>Attempt</th><th>Status</th><th>Slots</th><th>Pairs/s</th><th>Other work on the arms' CPUs</th><th>Reason</th></tr></thead><tbody>${trials}</tbody></table>`,
  );
  const others = metricsTable(report, false);
  if (others) sections.push(`<details><summary>Other counters (reported, not judged)</summary>${others}</details>`);
  if (report.notes.length > 0) sections.push(`<h2>Notes</h2><ul>${report.notes.map((n) => `<li>${e(n)}</li>`).join('')}</ul>`);
  return sections;
}

export function renderHtml(report: ExperimentReport): string {
  const { experiment } = report;
  const compared = comparedText(experiment.spec);
  const sections = reportSections(report, svgChart);

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>Tandem ${e(headlineOf(report).word)}: ${e(experiment.workload)}${compared !== undefined ? ` (${e(compared)})` : ''} ${e(experiment.id)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}
table{border-collapse:collapse;width:100%;margin:8px 0}th,td{border-bottom:1px solid #e4e4e4;padding:4px 6px;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}td.why{font-size:12px;color:#555}
.banner{border:1px solid #9a6700;background:#fff8e1;padding:8px 12px}.good{color:#176f2c}.bad{color:#b00020}.warn{color:#9a6700}.ok{color:#444}.meta,.empty{color:#666;font-size:12px}
.tag{font-size:11px;background:#eee;border-radius:3px;padding:0 4px}code{background:#f4f4f4;padding:0 3px;word-break:break-all}svg{max-width:100%;height:auto}figure.chart{margin:8px 0}\n.pair{display:grid;grid-template-columns:1fr 1fr;gap:12px}pre{background:#f8f8f8;padding:6px;white-space:pre-wrap;word-break:break-all;max-height:320px;overflow:auto;font-size:12px}code.noise{text-decoration:line-through;color:#888}
</style></head><body>
${sections.join('\n')}
<p class="meta">Generated ${e(report.generatedAt)} · report schema ${e(report.schema)}</p>
</body></html>
`;
}

/**
 * Each arm's processes per trial, when the arms ran several: a slow process shows as one slow cell (marked) beside
 * its arm's others, not as a mysterious wide interval. CPU per request in µs; latency as each process's level
 * relative to its arm's mean.
 */
function processTable(report: ExperimentReport): string | undefined {
  const rows = report.perTrial.filter((t) => t.processes && (t.metric === 'cpu_per_request' || t.metric === 'latency_shift'));
  if (rows.length === 0) return undefined;
  const cell = (metric: string, values: readonly number[]): string => {
    const finite = values.filter(Number.isFinite);
    const mean = finite.reduce((a, b) => a + b, 0) / Math.max(1, finite.length);
    return values
      .map((v) => {
        const text = metric === 'cpu_per_request' ? `${number(v * 1e6)} µs` : `${v >= 0 ? '+' : ''}${number(v * 100, 1)}%`;
        // More than 10% above the arm's mean (latency levels are already relative to it): a slow process, seen as one.
        const slow = Number.isFinite(v) && (metric === 'cpu_per_request' ? v > mean * 1.1 : v > 0.1);
        return slow ? `<strong title="more than 10% slower than the arm's mean">${e(text)}</strong>` : e(text);
      })
      .join(' · ');
  };
  const body = rows
    .map(
      (t) =>
        `<tr><td>${e(t.metric)}</td><td class="n">${e(t.trial)}</td><td>${cell(t.metric, t.processes!.control)}</td><td>${cell(t.metric, t.processes!.treatment)}</td><td class="n">${e(`${t.effect >= 0 ? '+' : ''}${number(t.effect * 100, 2)}%`)}</td></tr>`,
    )
    .join('');
  return `<h2>Processes</h2><p class="meta">Each arm ran several fresh processes per trial, all on the same requests; an arm's value is its processes' mean, what a fleet of them pays (a fresh process can be slow for its whole life: docs/harness.md). Bold: more than 10% slower than the arm's mean.</p><table><thead><tr><th>metric</th><th>trial</th><th>control processes</th><th>treatment processes</th><th>trial effect</th></tr></thead><tbody>${body}</tbody></table>`;
}
