/**
 * Escaping of everything a report renders: recorded bodies, record ids,
 * metric and detector names can all carry markup. One function per output
 * context; renderers never concatenate unescaped values.
 */

const HTML_ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Text or attribute value inside HTML (and SVG). */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"'`]/g, (c) => HTML_ENTITIES[c]!);
}

/**
 * A Markdown table cell (GitHub renders inline HTML in comments, so markup is
 * neutralised as entities too): pipes escaped, line breaks flattened, and
 * characters that start links, emphasis or code escaped.
 */
export function escapeMarkdownCell(value: unknown): string {
  return escapeHtml(value)
    .replace(/\r?\n|\r/g, ' ')
    .replace(/([\\|*_[\]()#!~])/g, '\\$1');
}
