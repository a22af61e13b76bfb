/**
 * The Markdown report: sized for a CI comment. The verdict and its reasons
 * first, then the judged metrics (effect, 1 − α interval, verdict), then what
 * a reviewer must know: cancellations, excluded trials, failed checks,
 * response differences. Reported-only counters are summarised in one line.
 */
import type { ExperimentReport } from '../checks/evaluate.js';
import { formatEffect } from '../wording.js';
import { escapeMarkdownCell as cell } from './escape.js';
import { intervalHeading, sequentialText } from './sequential-text.js';
import { metricValue } from './metric-value.js';
import { comparedText, fieldName } from './compared-text.js';
import { headlineOf } from './headline.js';
import { shapeChange } from './shape-text.js';

const ICON: Readonly<Record<string, string>> = { passed: '✅', regressed: '❌', inconclusive: '❔', 'no data': '⚠️', cancelled: '⏹️', failed: '💥' };

const number = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

export function renderMarkdown(report: ExperimentReport): string {
  const lines: string[] = [];
  const { experiment, verdict } = report;
  const compared = comparedText(experiment.spec);
  const headline = headlineOf(report);
  lines.push(
    `### ${ICON[headline.word] ?? ''} Tandem: ${cell(headline.word)} — ${cell(experiment.workload)}${compared !== undefined ? `: ${cell(compared)}` : ''} (${cell(experiment.id)})`,
    '',
  );
  if (headline.stoppedBanner) lines.push(`> **${cell(headline.stoppedBanner)}**`, '');
  else if (verdict.outcome === 'inconclusive' || verdict.inconclusivePolicy) {
    const how =
      verdict.inconclusivePolicy === 'pass'
        ? 'passed only because the workload accepts inconclusive results'
        : verdict.inconclusivePolicy === 'fail'
          ? 'failed because the workload treats inconclusive results as failures'
          : 'not passed: more trials, or a less noisy setup, are needed';
    lines.push(`> **Inconclusive (${how}).** ${verdict.undecided.map(cell).join('; ')}`, '');
  }
  if (!report.stopped) for (const reason of verdict.reasons) lines.push(`- ${cell(reason)}`);
  lines.push(
    '',
    `${verdict.trials} trial(s) judged (${sequentialText(report)}), seed ${experiment.seed}, α = ${verdict.alpha} (Benjamini–Hochberg across the judged metrics whose trials could make them significant${verdict.familySize !== undefined ? `, counting ${verdict.familySize}` : ''}).`,
    '',
  );
  const judged = report.metrics.filter((m) => m.judged);
  if (judged.length > 0) {
    lines.push(
      `| Metric | Control | Treatment | Effect | ${intervalHeading(verdict.alpha)} | Verdict | Why |`,
      '| --- | ---: | ---: | ---: | --- | --- | --- |',
    );
    for (const m of judged) {
      const critical = m.policy?.critical ? ' (critical)' : '';
      lines.push(
        `| ${cell(m.metric)}${critical} | ${cell(metricValue(m, m.control))} | ${cell(metricValue(m, m.treatment))} | ${formatEffect(m.estimate, m.scale)} | [${formatEffect(m.low, m.scale)}, ${formatEffect(m.high, m.scale)}] | ${cell(m.verdict)} | ${cell(m.reason)} |`,
      );
    }
    lines.push('');
  }
  const reported = report.metrics.filter((m) => !m.judged && m.verdict !== 'no data');
  if (reported.length > 0) {
    const moved = reported.filter((m) => m.pValue < verdict.alpha).map((m) => `${cell(m.metric)} ${formatEffect(m.estimate, m.scale)}`);
    lines.push(
      `${reported.length} other counter(s) reported, not judged${moved.length > 0 ? `; moved (unadjusted p < ${verdict.alpha}): ${moved.slice(0, 10).join(', ')}${moved.length > 10 ? ', …' : ''}` : ''}.`,
      '',
    );
  }
  const narrowing = lookTable(report);
  if (narrowing.length > 0) lines.push(...narrowing, '');
  const slow = slowProcesses(report);
  if (slow) lines.push(slow, '');
  if (report.cancellation) lines.push(`**Cancelled** by detector ${cell(report.cancellation.detector)}: ${cell(report.cancellation.reason)}`, '');
  if (report.excludedTrials.length > 0) {
    lines.push('**Trials left out:**');
    for (const t of report.excludedTrials) lines.push(`- trial ${t.index + 1} attempt ${t.attempt} (${cell(t.status)}): ${cell(t.reason)}`);
    lines.push('');
  }
  if (report.finalChecks.length > 0) {
    lines.push('**Final checks:**');
    for (const c of report.finalChecks) lines.push(`- ${c.ok ? '✅' : '❌'} ${cell(c.name)}: ${cell(c.message)}`);
    lines.push('');
  }
  if (report.fanout.length > 0) lines.push(...guardrailLines(report), '');
  const comparison = report.comparison;
  if (comparison) lines.push(...responseLines(comparison), '');
  if (report.calibration)
    lines.push(
      `Calibrated by A/A run ${cell(report.calibration.experimentId)} (${report.calibration.trials} trials, false-positive rate ${number(report.calibration.falsePositiveRate * 100, 1)}%).`,
      '',
    );
  for (const note of report.notes) lines.push(`> ${cell(note)}`);
  return `${lines.join('\n').trimEnd()}\n`;
}

/** How each critical metric's interval narrowed, look by look. */
function lookTable(report: ExperimentReport): string[] {
  const critical = report.metrics.filter((m) => m.policy?.critical && m.looks.length > 1);
  if (critical.length === 0) return [];
  const lines = [
    '**How the intervals narrowed** (confidence sequence, valid at every look):',
    '',
    `| Trials | ${critical.map((m) => cell(m.metric)).join(' | ')} |`,
    `| ---: | ${critical.map(() => '---').join(' | ')} |`,
  ];
  const counts = [...new Set(critical.flatMap((m) => m.looks.map((l) => l.trials)))].sort((a, b) => a - b);
  for (const n of counts) {
    const cells = critical.map((m) => {
      const look = m.looks.find((l) => l.trials === n);
      return look ? `${formatEffect(look.estimate, m.scale)} [${formatEffect(look.low, m.scale)}, ${formatEffect(look.high, m.scale)}]` : '';
    });
    lines.push(`| ${n} | ${cells.join(' | ')} |`);
  }
  return lines;
}

/** Coverage first (what was compared, what was not and why), then the endpoints that differ, then ranking. */
function responseLines(comparison: NonNullable<ExperimentReport['comparison']>): string[] {
  const lines: string[] = [];
  const skipped = Object.entries(comparison.skipped ?? {}).sort((a, b) => b[1] - a[1]);
  const coverage = comparison.pairs > 0 ? comparison.comparedBodies / comparison.pairs : Number.NaN;
  lines.push(
    `**Responses:** ${comparison.pairs} pairs, bodies compared in ${comparison.comparedBodies} (${number(coverage * 100, 1)}%)${skipped.length > 0 ? `, not compared: ${skipped.map(([why, n]) => `${n} ${cell(why)}`).join('; ')}` : ''}; ${comparison.statusMismatches} status mismatch(es); semantically equal ${number(comparison.semanticAgreement * 100, 1)}%${comparison.noiseCancellation ? ' (noise-cancelled with control′)' : ''}.`,
  );
  const differing = (comparison.endpoints ?? []).filter((e) => e.differing > 0);
  if (differing.length > 0) {
    lines.push('', '| Endpoint | Pairs | Differ | Status mismatches | Fields that differ |', '| --- | ---: | ---: | ---: | --- |');
    for (const e of differing.slice(0, 5)) {
      const fields = e.fields
        .filter((f) => f.counted)
        .slice(0, 4)
        .map((f) => `${cell(fieldName(f.path))} (${number(f.share * 100, 0)}%)`);
      // A changed top-level shape first, in words; the field paths it implies follow.
      const shape = e.example ? shapeChange(e.example.control.body, e.example.treatment.body, e.example.differingFields) : undefined;
      lines.push(
        `| ${cell(e.endpoint)} | ${e.pairs} | ${number(e.share * 100, 1)}% | ${e.statusMismatches} | ${shape ? `**${cell(shape)}**; ` : ''}${fields.join(', ') || '—'} |`,
      );
    }
    if (differing.length > 5) lines.push('', `…and ${differing.length - 5} more endpoint(s) differ (see the HTML report).`);
  }
  const counted = comparison.fields.filter((f) => f.ignored === false).slice(0, 5);
  if (counted.length > 0) lines.push('');
  for (const f of counted)
    lines.push(
      `- ${cell(fieldName(f.path))} differs in ${number(f.rate * 100, 1)}% (e.g. record ${cell(f.example.recordId)}: ${cell(f.example.control)} → ${cell(f.example.treatment)})`,
    );
  if (comparison.ranking) {
    const r = comparison.ranking;
    lines.push(
      '',
      `Ranking: NDCG@${r.k} ${number(r.ndcg.mean, 4)} (min ${number(r.ndcg.min, 4)}), Kendall τ ${number(r.kendallTau.mean, 3)}, overlap@${r.k} ${number(r.overlap.mean, 3)}${r.noise ? `; control′ vs control NDCG ${number(r.noise.ndcg, 4)}` : ''}`,
    );
  }
  return lines;
}

/** Per dependency and arm: calls, writes blocked, calls refused, calls per target, fan-out (or why it is unknown). */
function guardrailLines(report: ExperimentReport): string[] {
  const lines = [
    '**Dependencies (guardrails):**',
    '',
    '| Dependency | Policy | Arm | Calls | Blocked | Refused | Per target | Calls/request |',
    '| --- | --- | --- | ---: | ---: | ---: | --- | ---: |',
  ];
  for (const f of report.fanout) {
    const targets = Object.entries(f.byTarget ?? {})
      .map(([target, calls]) => `${cell(target)} ${calls}`)
      .join(', ');
    lines.push(
      `| ${cell(f.dependency)} | ${cell(f.policy)} | ${cell(f.arm)} | ${f.calls} | ${f.blocked} | ${f.refused ?? 0} | ${targets || '—'} | ${f.fanOut === null ? 'unknown' : number(f.fanOut, 2)} |`,
    );
  }
  if (report.fanout.some((f) => f.fanOut === null))
    lines.push('', 'Calls/request is unknown where the service does not forward `x-tandem-record` on its downstream calls (see docs/guardrails.md).');
  return lines;
}

/** The processes more than 10% slower in CPU per request than their arm's fastest, trial by trial (the arm is judged by its fastest). */
function slowProcesses(report: ExperimentReport): string | undefined {
  const rows = report.perTrial.filter((t) => t.metric === 'cpu_per_request' && t.processes);
  if (rows.length === 0) return undefined;
  const slow: string[] = [];
  for (const t of rows) {
    for (const arm of ['control', 'treatment'] as const) {
      const values = t.processes![arm];
      const fastest = Math.min(...values.filter(Number.isFinite));
      values.forEach((v, i) => {
        if (v > fastest * 1.1) slow.push(`trial ${t.trial + 1} ${arm} process ${i} (+${number((v / fastest - 1) * 100, 0)}%)`);
      });
    }
  }
  const perArm = rows[0]!.processes!.control.length;
  return `${perArm} processes per arm per trial, each arm judged by its fastest; ${slow.length === 0 ? "none was more than 10% slower than its arm's fastest" : `more than 10% slower than their arm's fastest (CPU per request): ${slow.slice(0, 12).join(', ')}${slow.length > 12 ? `, and ${slow.length - 12} more` : ''}`}.`;
}
