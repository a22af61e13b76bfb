/**
 * The report for a terminal: the Markdown report's words and tables, without the escapes that make it safe
 * to render as Markdown (`error\_share`, `&lt;`, `\[`), which a terminal would show as they are. Control
 * characters stay escaped (escapeControls ran inside every cell), so nothing in a name acts on the terminal.
 */
import type { ExperimentReport } from '../checks/evaluate.js';
import { renderMarkdown } from './markdown-report.js';

const ENTITIES: Readonly<Record<string, string>> = { '&lt;': '<', '&gt;': '>', '&amp;': '&' };

/** Markdown text with escapeMarkdownCell's escapes undone. */
export function markdownForTerminal(markdown: string): string {
  return markdown.replace(/\\([\\|*_[\]~`])|&(?:lt|gt|amp);/g, (match, escaped: string | undefined) => escaped ?? ENTITIES[match]!);
}

export function renderText(report: ExperimentReport): string {
  return markdownForTerminal(renderMarkdown(report));
}
