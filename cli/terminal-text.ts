/**
 * Text from recorded requests is hostile: an ESC sequence in a path or header
 * would clear the screen or set the window title of whoever runs
 * `tandem corpus show`. Control characters (C0, DEL, C1) and the Unicode
 * line/paragraph separators and bidi overrides are shown escaped instead.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
