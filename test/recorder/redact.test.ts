import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor, rulesForTier } from '../../recorder/index.js';
import { DEFAULT_SECRET_NAMES } from '../../core/index.js';

const json = { 'content-type': 'application/json' };
const bodyText = (redactor: Redactor, body: string | Buffer, headers: Record<string, string> = json): string => {
  const out = redactor.body(Buffer.isBuffer(body) ? body : Buffer.from(body), headers);
  if (out.withheld !== undefined) throw new Error(`withheld: ${out.withheld}`);
  return out.body.toString();
};

describe('redaction', () => {
  it('replaces credential headers, configured ones and headers named like a secret, case-insensitively', () => {
    const redactor = new Redactor({ headers: ['X-Custom-Key'] });
    expect(
      redactor.headers({
        Authorization: 'Bearer s3cret',
        cookie: 'a=b',
        'set-cookie': ['x=1', 'y=2'],
        'proxy-authorization': 'Basic x',
        'x-custom-key': 'k',
        'X-Api-Key': 'k2',
        accept: ['a', 'b'],
        'x-ok': 'fine',
        'x-tokens-left': '5',
      }),
    ).toEqual({
      authorization: REDACTED,
      cookie: REDACTED,
      'set-cookie': REDACTED,
      'proxy-authorization': REDACTED,
      'x-custom-key': REDACTED,
      'x-api-key': REDACTED,
      accept: 'a, b',
      'x-ok': 'fine',
      'x-tokens-left': '5',
    });
  });

  it('replaces headers whose name holds a secret word as a whole word anywhere in it, not only at its end', () => {
    const redactor = new Redactor();
    expect(
      redactor.headers({
        'X-Forwarded-Authorization': 'Bearer s',
        'x-original-cookie': 'sid=1',
        'x-auth-token-v2': 't',
        'x-session-password-hash': 'h',
        'x-authorized-by': 'ann',
        'x-tokens-left': '5',
        'x-cookieless': 'yes',
      }),
    ).toEqual({
      'x-forwarded-authorization': REDACTED,
      'x-original-cookie': REDACTED,
      'x-auth-token-v2': REDACTED,
      'x-session-password-hash': REDACTED,
      'x-authorized-by': 'ann',
      'x-tokens-left': '5',
      'x-cookieless': 'yes',
    });
    // A hostile name of thousands of words is judged in linear time (runs never longer than the longest secret name).
    const long = `x-${'a-'.repeat(5_000)}token`;
    expect(redactor.headers({ [long]: 'v' })[long]).toBe(REDACTED);
  });

  it('redacts secrets inside JSON carried in a string field, at any depth of nesting, and leaves other strings alone', () => {
    const redactor = new Redactor();
    const inner = JSON.stringify({ token: 'S', keep: 'k' });
    const twice = JSON.stringify({ wrapped: JSON.stringify({ password: 'P2' }) });
    const out = JSON.parse(bodyText(redactor, JSON.stringify({ data: inner, deeper: twice, text: '{not json', list: '[1,2]', id: 3 })));
    expect(JSON.parse(out.data)).toEqual({ token: REDACTED, keep: 'k' });
    expect(JSON.parse(JSON.parse(out.deeper).wrapped)).toEqual({ password: REDACTED });
    expect(out.text).toBe('{not json');
    expect(out.list).toBe('[1,2]');
    // The exact body: other bytes unchanged, only the string holding the secret re-encoded.
    expect(bodyText(redactor, '{"data":"{\\"token\\":\\"S\\"}", "n": 1.10}')).toBe(
      `{"data":${JSON.stringify(JSON.stringify({ token: REDACTED }))}, "n": 1.10}`,
    );
  });

  it('replaces configured JSON paths from the root, through arrays, and secret names at any depth', () => {
    const redactor = new Redactor({ bodyFields: ['user.email', 'items.sku'] });
    const body = {
      user: { email: 'a@b.c', name: 'Ann' },
      items: [{ sku: 't1', id: 1 }, { id: 2 }, { sku: 't3', deep: { password: 'p' } }],
      other: { email: 'kept' },
    };
    expect(JSON.parse(bodyText(redactor, JSON.stringify(body)))).toEqual({
      user: { email: REDACTED, name: 'Ann' },
      items: [{ sku: REDACTED, id: 1 }, { id: 2 }, { sku: REDACTED, deep: { password: REDACTED } }],
      other: { email: 'kept' },
    });
  });

  it('returns the very same bytes when nothing is secret', () => {
    const untouched = Buffer.from('{"other": 1}');
    const out = new Redactor().body(untouched, json);
    expect(out.body).toBe(untouched);
  });

  it('replaces a whole secret value whatever its type, and keys written with escapes', () => {
    const redactor = new Redactor();
    expect(bodyText(redactor, '{"token":{"a":[1,2,{"b":3}]},"pass\\u0077ord":[1],"api_key":null,"x":1}')).toBe(
      `{"token":"${REDACTED}","pass\\u0077ord":"${REDACTED}","api_key":"${REDACTED}","x":1}`,
    );
  });

  it('uses the default names unless the config replaces them, and adds a tier’s names', () => {
    expect(rulesForTier({}, 'query').names).toEqual([...DEFAULT_SECRET_NAMES]);
    const rules = rulesForTier(
      { names: ['pin'], headers: [], bodyFields: [], tiers: { query: { names: ['ssn'], headers: ['x-session'], bodyFields: ['a.b'] } } },
      'query',
    );
    expect(rules).toEqual({ names: ['pin', 'ssn'], headers: ['x-session'], bodyFields: ['a.b'] });
    // "constructor" is not a tier anyone configured.
    expect(rulesForTier({ tiers: {} }, 'constructor').names).toEqual([...DEFAULT_SECRET_NAMES]);
    const redactor = new Redactor(rules);
    expect(bodyText(redactor, '{"pin":1,"ssn":2,"password":3}')).toBe(`{"pin":"${REDACTED}","ssn":"${REDACTED}","password":3}`);
  });
});
