/**
 * One experiment, sized for a CI summary that lists several: its outcome, the judged metrics (effect,
 * interval, verdict), the endpoints whose responses differ most (a changed shape said in words), and where
 * its full HTML report is. The full Markdown report stays `tandem report`'s.
 */
import type { ExperimentReport } from '../checks/evaluate.js';
import { formatEffect } from '../wording.js';
import { escapeMarkdownCell as cell } from './escape.js';
import { fieldName } from './compared-text.js';
import { headlineOf } from './headline.js';
import { shapeChange } from './shape-text.js';
import { intervalHeading } from './sequential-text.js';

export function renderSummaryMarkdown(report: ExperimentReport, htmlPath?: string): string[] {
  const headline = headlineOf(report);
  const lines = [`#### ${cell(report.experiment.workload)}: ${cell(headline.word)} (${cell(report.experiment.id)})`, ''];
  if (headline.stoppedBanner) lines.push(cell(headline.stoppedBanner), '');
  const judged = report.metrics.filter((m) => m.judged);
  if (judged.length > 0) {
    lines.push(`| Metric | Effect | ${intervalHeading(report.verdict.alpha)} | Verdict |`, '| --- | ---: | --- | --- |');
    for (const m of judged)
      lines.push(
        `| ${cell(m.metric)}${m.policy?.critical ? ' (critical)' : ''} | ${formatEffect(m.estimate, m.scale)} | [${formatEffect(m.low, m.scale)}, ${formatEffect(m.high, m.scale)}] | ${cell(m.verdict)} |`,
      );
    lines.push('');
  }
  const differing = (report.comparison?.endpoints ?? []).filter((e) => e.differing > 0).slice(0, 3);
  if (differing.length > 0) {
    lines.push('| Endpoint | Differ | What changed |', '| --- | ---: | --- |');
    for (const e of differing) {
      const shape = e.example ? shapeChange(e.example.control.body, e.example.treatment.body, e.example.differingFields) : undefined;
      const fields = e.fields
        .filter((f) => f.counted)
        .slice(0, 3)
        .map((f) => cell(fieldName(f.path)));
      const status = e.statusMismatches > 0 ? `${e.statusMismatches} status mismatch(es)` : undefined;
      lines.push(
        `| ${cell(e.endpoint)} | ${(e.share * 100).toFixed(1)}% | ${[shape ? cell(shape) : undefined, status, fields.length > 0 ? fields.join(', ') : undefined].filter(Boolean).join('; ') || '—'} |`,
      );
    }
    lines.push('');
  }
  if (htmlPath !== undefined) lines.push(`Full report: \`${cell(htmlPath)}\``, '');
  return lines;
}
