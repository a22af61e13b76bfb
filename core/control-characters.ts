/**
 * Characters a terminal, a CI log or a reader acts on rather than shows: C0 controls (ESC starts the
 * sequences that set a window title or clear a screen), DEL, C1 (U+009B is a one-byte CSI to some
 * terminals), the line and paragraph separators and the bidi overrides that reorder what a reader sees.
 * Names from repositories, recordings and configs can hold any of them.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex -- as above, line breaks and tabs included
const UNSAFE_WITH_LINES = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with every such character written as a visible `\uXXXX` escape. The form is also a valid escape
 * inside a JSON string, so a JSON line stays the same JSON. `lineBreaks: 'keep'` leaves `\n` and `\t`
 * (output made of several lines); otherwise they are escaped too (a one-line value).
 */
export function escapeControls(text: string, lineBreaks: 'keep' | 'escape' = 'escape'): string {
  return text.replace(lineBreaks === 'keep' ? UNSAFE : UNSAFE_WITH_LINES, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// A non-global copy for `test`: the global pattern would carry `lastIndex` between calls.
const ANY_UNSAFE = new RegExp(UNSAFE_WITH_LINES.source);

/** Whether `text` holds any such character (line breaks and tabs included): for names that must be printable. */
export function hasControlCharacters(text: string): boolean {
  return ANY_UNSAFE.test(text);
}
