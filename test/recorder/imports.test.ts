import { describe, expect, it } from 'vitest';
import type { CorpusRecord } from '../../core/index.js';
import { GOR_SEPARATOR, REDACTED, Redactor, formatGor, parseGor, parseHar } from '../../recorder/index.js';

const options = { tier: 'query', redactor: new Redactor({ bodyFields: ['password'] }), maxBodyBytes: 1_000 };
const T = Date.UTC(2026, 10, 30, 9, 0, 0);

function harEntry(overrides: Record<string, unknown> = {}, request: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    startedDateTime: new Date(T).toISOString(),
    request: {
      method: 'POST',
      url: 'https://shop.example/api/search?q=caf%C3%A9&page=2',
      httpVersion: 'HTTP/2',
      headers: [
        { name: ':authority', value: 'shop.example' },
        { name: 'Content-Type', value: 'application/json' },
        { name: 'Authorization', value: 'Bearer abc' },
        { name: 'Accept', value: 'a' },
        { name: 'accept', value: 'b' },
      ],
      postData: { mimeType: 'application/json', text: '{"q":"café","password":"x"}' },
      ...request,
    },
    ...overrides,
  };
}

describe('HAR import', () => {
  it('imports requests with path, query, headers and redacted bodies', () => {
    const { records, skipped } = parseHar(JSON.stringify({ log: { entries: [harEntry()] } }), options);
    expect(skipped).toEqual([]);
    expect(records).toEqual([
      expect.objectContaining({
        tier: 'query',
        timeMs: T,
        method: 'POST',
        path: '/api/search?q=caf%C3%A9&page=2',
        sampleMode: 'import',
        sampleRate: 1,
        bodyTruncated: false,
      }),
    ]);
    expect(records[0]!.headers).toEqual({ 'content-type': 'application/json', authorization: REDACTED, accept: 'a, b' });
    expect(JSON.parse(Buffer.from(records[0]!.body, 'base64').toString())).toEqual({ q: 'café', password: REDACTED });
  });

  it('reports malformed entries by number and imports the rest', () => {
    const entries = [
      harEntry(),
      { nothing: true },
      harEntry({}, { method: 'GET POST' }),
      harEntry({}, { url: '/relative' }),
      harEntry({ startedDateTime: 'yesterday' }),
      harEntry({}, { headers: [{ name: 1, value: 'x' }] }),
      harEntry({}, { postData: { text: 42 } }),
      harEntry({}, { method: 'GET', postData: undefined }),
      harEntry(
        {},
        {
          headers: [{ name: 'content-type', value: 'application/octet-stream' }],
          postData: { mimeType: 'application/octet-stream', text: Buffer.from([0, 1, 2]).toString('base64'), encoding: 'base64' },
        },
      ),
      harEntry({}, { url: 'javascript:alert(1)' }),
      harEntry({}, { url: 'data:text/plain,hi' }),
    ];
    const { records, skipped } = parseHar(JSON.stringify({ log: { entries } }), options);
    expect(records).toHaveLength(3);
    expect(Buffer.from(records[2]!.body, 'base64')).toEqual(Buffer.from([0, 1, 2]));
    expect(skipped.map((s) => s.where)).toEqual(['entry 1', 'entry 2', 'entry 3', 'entry 4', 'entry 5', 'entry 6', 'entry 9', 'entry 10']);
    expect(skipped[2]!.reason).toContain('is not an absolute URL');
    // Issue 32: a javascript: URL was imported with the path `alert(1)`.
    expect(skipped[6]!.reason).toBe('request.url "javascript:alert(1)" is not an http(s) URL (javascript:)');
  });

  it('refuses a file that is not HAR at all', () => {
    expect(() => parseHar('{"log":', options)).toThrow(/not a HAR file/);
    expect(() => parseHar('{"entries":[]}', options)).toThrow('not a HAR file: log.entries is missing or not a list');
  });
});

describe('GoReplay import', () => {
  const record = (i: number, body = '', contentType = 'application/json'): CorpusRecord => ({
    id: `id-${i}`,
    tier: 'query',
    timeMs: T + i,
    method: i % 2 ? 'POST' : 'GET',
    path: `/p/${i}?x=${i}`,
    headers: { host: 'svc', 'content-type': contentType, 'x-n': String(i) },
    body: Buffer.from(body).toString('base64'),
    bodyTruncated: false,
    sampleRate: 1,
    sampleMode: 'import',
  });

  it('round-trips requests through the .gor format', () => {
    const original = [record(0), record(1, 'text\n\nwith blank lines', 'text/plain'), record(2, '{"a": 1.10, "ü": 12345678901234567891}')];
    const { records, skipped, ignoredResponses } = parseGor(formatGor(original), options);
    expect(skipped).toEqual([]);
    expect(ignoredResponses).toBe(0);
    expect(records.map(({ id: _id, ...rest }) => rest)).toEqual(original.map(({ id: _id, ...rest }) => rest));
  });

  it('skips responses quietly and malformed payloads with their line number', () => {
    const good = formatGor([record(0)]).toString();
    const file = [
      good, // line 1..
      '2 abc 1700000000000000000 12\nHTTP/1.1 200 OK\r\nx: y\r\n\r\nok',
      'garbage meta\nGET / HTTP/1.1',
      '1 abc 1700000000000000000\nNOT A REQUEST LINE',
      '1 abc 1700000000000000000\nGET /x HTTP/1.1\r\nbad header line\r\n\r\n',
      '1 abc 1700000000000000000\nGET http://svc.example/abs?q=1 HTTP/1.1\r\nhost: svc\r\n\r\n',
    ].join(GOR_SEPARATOR);
    const { records, skipped, ignoredResponses } = parseGor(Buffer.from(file), options);
    expect(ignoredResponses).toBe(1);
    expect(records.map((r) => r.path)).toEqual(['/p/0?x=0', '/abs?q=1']);
    const goodLines = good.split('\n').length;
    // Each payload starts two lines after the previous one ends (its last newline, then the separator line).
    const garbage = goodLines + 2 + 5 + 1;
    expect(skipped.map((s) => s.where)).toEqual([`line ${garbage}`, `line ${garbage + 3}`, `line ${garbage + 6}`]);
    expect(skipped[0]!.reason).toContain('is not "TYPE ID TIMESTAMP_NS"');
  });
});
