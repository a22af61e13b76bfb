import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor } from '../../recorder/index.js';

describe('redaction', () => {
  it('replaces credential headers and configured ones, case-insensitively', () => {
    const redactor = new Redactor({ headers: ['X-Api-Key'] });
    expect(
      redactor.headers({ Authorization: 'Bearer s3cret', cookie: 'a=b', 'set-cookie': ['x=1', 'y=2'], 'proxy-authorization': 'Basic x', 'x-api-key': 'k', accept: ['a', 'b'], 'x-ok': 'fine' }),
    ).toEqual({ authorization: REDACTED, cookie: REDACTED, 'set-cookie': REDACTED, 'proxy-authorization': REDACTED, 'x-api-key': REDACTED, accept: 'a, b', 'x-ok': 'fine' });
  });

  it('replaces configured JSON body fields, through nested objects and arrays', () => {
    const redactor = new Redactor({ bodyFields: ['user.email', 'items.token', 'password'] });
    const body = { user: { email: 'a@b.c', name: 'Ann' }, items: [{ token: 't1', id: 1 }, { id: 2 }, { token: 't3' }], password: 'hunter2', other: 1 };
    const out = JSON.parse(redactor.body(Buffer.from(JSON.stringify(body)), 'application/json; charset=utf-8').toString());
    expect(out).toEqual({ user: { email: REDACTED, name: 'Ann' }, items: [{ token: REDACTED, id: 1 }, { id: 2 }, { token: REDACTED }], password: REDACTED, other: 1 });
    expect(redactor.body(Buffer.from('{"password":"x"}'), 'application/vnd.api+json').toString()).toBe(`{"password":"${REDACTED}"}`);
  });

  it('leaves bodies that are not JSON, or not declared as JSON, as they are', () => {
    const redactor = new Redactor({ bodyFields: ['password'] });
    expect(redactor.body(Buffer.from('password=x'), 'application/x-www-form-urlencoded').toString()).toBe('password=x');
    expect(redactor.body(Buffer.from('{"password":'), 'application/json').toString()).toBe('{"password":');
    const untouched = Buffer.from('{"other":1}');
    expect(redactor.body(untouched, 'application/json')).toBe(untouched);
  });
});
