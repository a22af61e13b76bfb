/**
 * Escaping of everything a report renders: recorded bodies, record ids,
 * metric and detector names can all carry markup. One function per output
 * context; renderers never concatenate unescaped values.
 */

import { escapeControls } from '../../core/index.js';

const HTML_ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Text or attribute value inside HTML (and SVG). */
export function escapeHtml(value: unknown): string {
  // Controls shown as escapes, not dropped unseen by the browser (a name differing only by them is a different name).
  return escapeControls(String(value), 'keep').replace(/[&<>"'`]/g, (c) => HTML_ENTITIES[c]!);
}

/**
 * A Markdown table cell (GitHub renders inline HTML in comments, so `<`, `>`
 * and `&` become entities): pipes escaped, line breaks flattened, and the
 * characters that start links, emphasis or code escaped. Quotes and
 * parentheses stay as they are — they start nothing without a `[` — so the
 * same text reads cleanly in a terminal.
 */
export function escapeMarkdownCell(value: unknown): string {
  const text = String(value)
    .replace(/[&<>]/g, (c) => HTML_ENTITIES[c]!)
    .replace(/\r?\n|\r/g, ' ')
    .replace(/([\\|*_[\]~`])/g, '\\$1');
  // After the backslash escapes, so the escape's own backslash stays single.
  return escapeControls(text);
}
