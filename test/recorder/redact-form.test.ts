import { describe, expect, it } from 'vitest';
import { FORM_REDACTED, redactFormText, redactUrl } from '../../recorder/redact-form.js';

const isSecret = (name: string): boolean => name.toLowerCase() === 'password' || name === 'api key';
/** What the rule means, spelled the slow way: split on `&`, replace secret fields' values, join. */
const reference = (text: string): string | undefined => {
  let changed = false;
  const fields = text.split('&').map((field) => {
    const eq = field.indexOf('=');
    if (eq < 0) return field;
    let name = field.slice(0, eq).replaceAll('+', ' ');
    try {
      name = decodeURIComponent(name);
    } catch {
      // compared as written
    }
    if (!isSecret(name)) return field;
    changed = true;
    return `${field.slice(0, eq)}=${FORM_REDACTED}`;
  });
  return changed ? fields.join('&') : undefined;
};

describe('form and query redaction', () => {
  it.each([
    ['password=x', `password=${FORM_REDACTED}`],
    ['a=1&&password=x&b', `a=1&&password=${FORM_REDACTED}&b`],
    ['password=x&password=y&', `password=${FORM_REDACTED}&password=${FORM_REDACTED}&`],
    ['&password=', `&password=${FORM_REDACTED}`],
    ['PASSWORD=x&p%61ssword=y&api+key=z&api%2Bkey=w', `PASSWORD=${FORM_REDACTED}&p%61ssword=${FORM_REDACTED}&api+key=${FORM_REDACTED}&api%2Bkey=w`],
    ['%zz=1&password', undefined],
    ['password&x=password=1', undefined],
    ['', undefined],
    ['=password', undefined],
  ])('%j: only secret values change, every other byte stays', (text, expected) => {
    expect(redactFormText(text, isSecret)).toBe(expected);
    expect(redactFormText(text, isSecret)).toBe(reference(text));
  });

  it('redacts the query of a request target and keeps its path and fragment', () => {
    expect(redactUrl('/p?a=1&password=2#password=3', isSecret)).toBe(`/p?a=1&password=${FORM_REDACTED}#password=3`);
    expect(redactUrl('/p/password=2', isSecret)).toBe('/p/password=2');
    expect(redactUrl('/p?', isSecret)).toBe('/p?');
  });
});
