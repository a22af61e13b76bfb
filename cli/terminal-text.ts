/**
 * Text from recorded requests is hostile: an ESC sequence in a path or header
 * would clear the screen or set the window title of whoever runs
 * `tandem corpus show`. Control characters (C0, DEL, C1) and the Unicode
 * line/paragraph separators and bidi overrides are shown escaped instead
 * (core's escapeControls, one definition of what is unsafe).
 */
import { escapeControls } from '../core/control-characters.js';

export function terminalSafe(text: string): string {
  return escapeControls(text);
}

/** One line of at most `max` characters: whitespace runs (line breaks too) become one space; a longer text is cut at a word, with "…". */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max - 1);
  // The cut ends a word when the next character is a space; otherwise back up to the last whole word.
  if (flat[max - 1] === ' ') return `${cut}…`;
  const space = cut.lastIndexOf(' ');
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}

/** Rows as aligned columns under a header; `right` names the columns aligned right (numbers). The last column is not padded. */
export function columns(header: readonly string[], rows: readonly (readonly string[])[], right: ReadonlySet<number> = new Set()): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : right.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}
