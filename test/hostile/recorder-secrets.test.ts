/**
 * Hostile inputs to the recorder's redaction (issue 18, "never stores a
 * secret"): every body below was stored verbatim, re-serialized or crashed the
 * redactor on the landed code.
 */
import { gzipSync, gunzipSync, brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor } from '../../recorder/index.js';

const redactor = new Redactor();
const redactedText = (body: string | Buffer, headers: Record<string, string>): string => {
  const out = redactor.body(Buffer.isBuffer(body) ? body : Buffer.from(body), headers);
  if (out.withheld !== undefined) throw new Error(`withheld: ${out.withheld}`);
  return out.body.toString('utf8');
};
const withheld = (body: string | Buffer, headers: Record<string, string>): string | undefined =>
  redactor.body(Buffer.isBuffer(body) ? body : Buffer.from(body), headers).withheld;

describe('redaction never rewrites what it does not redact', () => {
  it('keeps numbers beyond double precision, 1e999 and 1.10 byte for byte', () => {
    const body = '{"id": 12345678901234567891, "big": 1e999, "price": 1.10, "password": "hunter2",\n  "list": [1.0, -0, 2E+3]}';
    expect(redactedText(body, { 'content-type': 'application/json' })).toBe(body.replace('"hunter2"', `"${REDACTED}"`));
  });

  it('redacts a body nested 20,000 deep without overflowing the stack', () => {
    const depth = 20_000;
    const body = `${'{"a":'.repeat(depth)}{"token":"t"}${'}'.repeat(depth)}`;
    const out = redactedText(body, { 'content-type': 'application/json' });
    expect(out).toBe(body.replace('"t"', `"${REDACTED}"`));
  });
});

describe('secrets are found whatever the declared content type', () => {
  const secretFree = (text: string): void => {
    expect(text).not.toMatch(/hunter2|s3cr3t|tok123/);
  };

  it('query-string secrets', () => {
    const url = redactor.url('/search?q=shoes&access_token=tok123&API_KEY=s3cr3t&pass%77ord=hunter2#frag');
    secretFree(url);
    expect(url).toBe('/search?q=shoes&access_token=%5Bredacted%5D&API_KEY=%5Bredacted%5D&pass%77ord=%5Bredacted%5D#frag');
    expect(redactor.url('/plain?q=1&token')).toBe('/plain?q=1&token');
  });

  it('form-encoded bodies, declared or sent as text/plain or without a type', () => {
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', '']) {
      const out = redactedText('user=ann&password=hunter2&next=%2Fhome', type ? { 'content-type': type } : {});
      secretFree(out);
      expect(out).toBe('user=ann&password=%5Bredacted%5D&next=%2Fhome');
    }
  });

  it('multipart fields, and JSON inside a part', () => {
    const body = [
      '--XyZ',
      'Content-Disposition: form-data; name="user"',
      '',
      'ann',
      '--XyZ',
      'Content-Disposition: form-data; name="password"',
      '',
      'hunter2',
      '--XyZ',
      'Content-Disposition: form-data; name="meta"; filename="m.json"',
      'Content-Type: application/json',
      '',
      '{"token":"tok123","n":1.10}',
      '--XyZ--',
      '',
    ].join('\r\n');
    const out = redactedText(body, { 'content-type': 'multipart/form-data; boundary=XyZ' });
    secretFree(out);
    expect(out).toBe(body.replace('hunter2', REDACTED).replace('"tok123"', `"${REDACTED}"`));
  });

  it('JSON with a BOM, sent as text/plain or without a type, and NDJSON', () => {
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"password":"hunter2"}')]);
    expect(redactor.body(withBom, { 'content-type': 'application/json' }).body).toEqual(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`{"password":"${REDACTED}"}`)]),
    );
    secretFree(redactedText('{"password":"hunter2"}', { 'content-type': 'text/plain' }));
    secretFree(redactedText(' [{"token":"tok123"}]', {}));
    expect(redactedText('{"token":"tok123"}\n{"token":"s3cr3t"}\n', { 'content-type': 'application/x-ndjson' })).toBe(
      `{"token":"${REDACTED}"}\n{"token":"${REDACTED}"}\n`,
    );
  });

  it('gzip- and brotli-encoded JSON is decoded, redacted and encoded again', () => {
    const gz = redactor.body(gzipSync(Buffer.from('{"password":"hunter2","a":1.10}')), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect(gunzipSync(gz.body!).toString()).toBe(`{"password":"${REDACTED}","a":1.10}`);
    // gzip without the header (its magic bytes) too.
    const sniffed = redactor.body(gzipSync(Buffer.from('{"token":"tok123"}')), {});
    expect(gunzipSync(sniffed.body!).toString()).toBe(`{"token":"${REDACTED}"}`);
    const br = redactor.body(brotliCompressSync(Buffer.from('a=1&token=tok123')), {
      'content-type': 'application/x-www-form-urlencoded',
      'content-encoding': 'br',
    });
    expect(brotliDecompressSync(br.body!).toString()).toBe('a=1&token=%5Bredacted%5D');
  });

  it('UTF-16 JSON, with and without a byte-order mark, written back in its own byte order', () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"password":"hunter2"}', 'utf16le')]);
    const out = redactor.body(le, { 'content-type': 'application/json' }).body!;
    expect(out.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xfe]));
    expect(out.subarray(2).toString('utf16le')).toBe(`{"password":"${REDACTED}"}`);
    const be = Buffer.from('{"token":"tok123"}', 'utf16le').swap16();
    const outBe = redactor.body(be, {}).body!;
    expect(Buffer.from(outBe).swap16().toString('utf16le')).toBe(`{"token":"${REDACTED}"}`);
  });
});

describe('a body that cannot be read while secrets may be in it is withheld, never stored verbatim', () => {
  it.each([
    ['malformed JSON', '{"password": "hunter2"', { 'content-type': 'application/json' }],
    ['JSON with trailing bytes', '{"password":"hunter2"} trailing', { 'content-type': 'application/json' }],
    ['JSON-looking text/plain', '{password: "hunter2"}', { 'content-type': 'text/plain' }],
    [
      'a multipart body without its closing boundary',
      '--b\r\nContent-Disposition: form-data; name="password"\r\n\r\nhunter2',
      { 'content-type': 'multipart/form-data; boundary=b' },
    ],
    ['a multipart type without a boundary', 'password=hunter2', { 'content-type': 'multipart/form-data' }],
    ['an unknown content encoding', 'password=hunter2', { 'content-encoding': 'zstd' }],
    ['a corrupt gzip body', Buffer.from([0x1f, 0x8b, 0x08, 0, 1, 2, 3]), { 'content-encoding': 'gzip' }],
  ] as const)('%s', (_what, body, headers) => {
    expect(withheld(body, headers)).toEqual(expect.any(String));
  });

  it('a gzip bomb beyond the decoded-size limit', () => {
    const small = new Redactor({}, { maxDecodedBytes: 1_000 });
    const bomb = gzipSync(Buffer.alloc(100_000, 0x20));
    expect(small.body(bomb, { 'content-encoding': 'gzip' }).withheld).toMatch(/limit/);
  });

  it('binary and unstructured text bodies stay as they are', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0]);
    expect(redactor.body(png, { 'content-type': 'image/png' }).body).toBe(png);
    const text = Buffer.from('hello there, no fields here');
    expect(redactor.body(text, { 'content-type': 'text/plain' }).body).toBe(text);
  });
});
