/**
 * Redaction of `application/x-www-form-urlencoded` text — form bodies and
 * query strings — by field name. Only the values of secret fields change;
 * separators, order, encoding and every other byte stay as they were.
 */

/** `[redacted]`, form-encoded. */
export const FORM_REDACTED = '%5Bredacted%5D';

function decodeFormName(raw: string): string {
  if (!raw.includes('%') && !raw.includes('+')) return raw;
  const spaced = raw.replaceAll('+', ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    // A malformed escape: compare the name as written (it cannot decode to anything else).
    return spaced;
  }
}

/** The text with secret fields' values replaced, or undefined when nothing was secret. */
export function redactFormText(text: string, isSecret: (name: string) => boolean): string | undefined {
  // One pass with indexOf, copying only when a value is replaced: this runs on every recorded query string.
  let out: string | undefined;
  let copiedTo = 0;
  for (let start = 0; start <= text.length;) {
    let end = text.indexOf('&', start);
    if (end < 0) end = text.length;
    const eq = text.indexOf('=', start);
    if (eq >= 0 && eq < end && isSecret(decodeFormName(text.slice(start, eq)))) {
      out = `${out ?? ''}${text.slice(copiedTo, eq + 1)}${FORM_REDACTED}`;
      copiedTo = end;
    }
    start = end + 1;
  }
  return out === undefined ? undefined : `${out}${text.slice(copiedTo)}`;
}

/** A request target (path?query#fragment) with secret query parameters redacted. */
export function redactUrl(url: string, isSecret: (name: string) => boolean): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const hash = url.indexOf('#', q);
  const query = url.slice(q + 1, hash < 0 ? undefined : hash);
  const redacted = redactFormText(query, isSecret);
  return redacted === undefined ? url : `${url.slice(0, q + 1)}${redacted}${hash < 0 ? '' : url.slice(hash)}`;
}

/** Printable text made only of `name=value` fields joined by `&`: a form, whatever its content type says. */
export function looksLikeForm(body: Buffer): boolean {
  if (body.length === 0 || body.length > 1_048_576) return false;
  const text = body.toString('latin1');
  return /^[^=&\s]+=[^&\s]*(?:&[^=&\s]+(?:=[^&\s]*)?)*$/.test(text);
}
