import type { RequestListener } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { systemClock, type CorpusRecord, type RequestOutcome } from '../../core/index.js';
import { pairedReplay } from '../../replayer/index.js';
import { comparableResponse } from '../../replayer/response-view.js';
import { compareResponses } from '../../harness/index.js';
import { inferEndpoints } from '../../harness/compare/endpoints.js';
import { stream } from '../support/corpus.js';
import { startServer as server } from '../support/recording.js';

const config = { ignoreFields: [], noiseRatio: 1.5 };

/** A small REST API; `version` 2 wraps the list in an envelope, turns ids into strings and ignores `?limit`. */
function api(version: 1 | 2): RequestListener {
  return (req, res) => {
    req.resume();
    const url = new URL(req.url ?? '/', 'http://x');
    const post = /^\/posts\/(\d+)$/.exec(url.pathname);
    let body: unknown;
    if (url.pathname === '/posts') {
      const limit = version === 1 ? Number(url.searchParams.get('limit') ?? 50) : 50;
      const items = Array.from({ length: limit }, (_, i) => ({ id: version === 1 ? i : String(i), title: `post ${i} ${'x'.repeat(40)}` }));
      body = version === 1 ? items : { data: items };
    } else if (post) body = { id: Number(post[1]), title: `post ${post[1]}`, text: 'y'.repeat(3_000) };
    else if (url.pathname === '/big')
      body = { rows: Array.from({ length: 4_000 }, (_, i) => ({ i, v: version === 2 && i === 3_999 ? 'changed' : 'same', pad: 'z'.repeat(40) })) };
    else body = { ok: true };
    const text = Buffer.from(JSON.stringify(body));
    // Like a real server: compress what is worth compressing when the client accepts it.
    const gzip = String(req.headers['accept-encoding'] ?? '').includes('gzip') && text.length > 1_024;
    res.writeHead(200, { 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
    res.end(gzip ? gzipSync(text) : text);
  };
}

const record = (i: number, path: string): CorpusRecord => ({
  id: `r${i}`,
  tier: 't',
  timeMs: Date.now() - 1_000 + i,
  method: 'GET',
  path,
  headers: { 'accept-encoding': 'gzip, deflate' },
  body: '',
  bodyTruncated: false,
  sampleRate: 1,
  sampleMode: 'uniform',
});

describe('response comparison of decoded bodies', () => {
  it('finds the changes a gzip-compressing server and a 200 KB body used to hide, grouped by endpoint, with full coverage', async () => {
    const control = await server(api(1));
    const treatment = await server(api(2));
    const records = [
      ...Array.from({ length: 12 }, (_, i) => record(i, `/posts/${i + 1}`)),
      ...Array.from({ length: 6 }, (_, i) => record(100 + i, '/posts?limit=3')),
      ...Array.from({ length: 3 }, (_, i) => record(200 + i, '/big')),
      ...Array.from({ length: 3 }, (_, i) => record(300 + i, '/health')),
    ];
    const outcomes: RequestOutcome[] = [];
    await pairedReplay({
      records: stream(records),
      arms: { control, treatment },
      ratePerSecond: 200,
      concurrency: 64,
      timeoutMs: 10_000,
      warmupMs: 0,
      measureMs: 60_000,
      seed: 1,
      identity: { experimentId: 'exp-c', trial: 0, attempt: 1, headerPrefix: 'x-tandem-', jobs: { control: 'c', treatment: 't' } },
      clock: systemClock,
      keepBodyBytes: 65_536,
      onOutcome: (o) => outcomes.push(o),
    });
    // The bodies really came compressed, and /big is beyond the kept size.
    expect(outcomes.filter((o) => o.response?.encoding === 'gzip').length).toBeGreaterThan(0);
    expect(outcomes.find((o) => o.response?.path === '/big')?.response?.sketch).toBeDefined();
    const result = compareResponses(outcomes, { config });
    expect(result.pairs).toBe(records.length);
    expect(result.comparedBodies).toBe(records.length);
    expect(result.skipped).toEqual({});
    const byEndpoint = new Map(result.endpoints.map((e) => [e.endpoint, e]));
    expect([...byEndpoint.keys()].sort()).toEqual(['GET /big', 'GET /health', 'GET /posts/:id', 'GET /posts?limit']);
    expect(byEndpoint.get('GET /health')!.differing).toBe(0);
    expect(byEndpoint.get('GET /posts/:id')!.differing).toBe(0);
    const list = byEndpoint.get('GET /posts?limit')!;
    expect(list.share).toBe(1);
    // The envelope: every old top-level path is gone and data[] appeared.
    expect(list.fields.map((f) => f.path)).toEqual(expect.arrayContaining(['[].id', 'data[].id']));
    expect(list.example?.control.body).toMatch(/^\[\{"id":0/);
    expect(list.example?.treatment.body).toMatch(/^\{"data":\[\{"id":"0"/);
    const big = byEndpoint.get('GET /big')!;
    expect(big.share).toBe(1);
    expect(big.fields.filter((f) => f.counted).map((f) => f.path)).toEqual(['rows[].v']);
  });

  it('decodes gzip, deflate and br alike; an unknown encoding or a decompression bomb is skipped with why, bounded', () => {
    const json = Buffer.from(JSON.stringify({ a: 1, list: [1, 2, 3] }));
    const request = { method: 'GET', path: '/x' };
    const views = [
      comparableResponse(json, {}, request, 65_536),
      comparableResponse(gzipSync(json), { 'content-encoding': 'gzip' }, request, 65_536),
      comparableResponse(deflateSync(json), { 'content-encoding': 'deflate' }, request, 65_536),
      comparableResponse(brotliCompressSync(json), { 'content-encoding': 'br' }, request, 65_536),
    ];
    expect(new Set(views.map((v) => v.view.contentHash)).size).toBe(1);
    // The replayer's hash of the raw bytes is reused for an unencoded body, never for a decoded one.
    expect(comparableResponse(json, {}, request, 65_536, 'raw-hash').view.contentHash).toBe('raw-hash');
    expect(comparableResponse(gzipSync(json), { 'content-encoding': 'gzip' }, request, 65_536, 'raw-hash').view.contentHash).toBe(views[0]!.view.contentHash);
    for (const v of views) expect(v.body?.equals(json)).toBe(true);
    expect(comparableResponse(json, { 'content-encoding': 'zstd' }, request, 65_536).view.skipped).toMatch(/content-encoding "zstd" cannot be decoded/);
    expect(comparableResponse(Buffer.from('not gzip'), { 'content-encoding': 'gzip' }, request, 65_536).view.skipped).toBe('gzip body could not be decoded');
    const bomb = gzipSync(Buffer.alloc(40 * 1_048_576));
    expect(comparableResponse(bomb, { 'content-encoding': 'gzip' }, request, 65_536).view.skipped).toBe('larger than 32 MiB once decoded');
  });

  it('reports pairs it could not compare, by reason, instead of counting them as agreeing', () => {
    const outcome = (arm: string, recordId: string, extra: Partial<RequestOutcome>): RequestOutcome => ({
      experimentId: 'e',
      trial: 0,
      attempt: 1,
      arm,
      recordId,
      intendedMs: 0,
      latencyMs: 1,
      status: 200,
      bytes: 1,
      errorClass: '',
      bodyHash: 'h',
      first: arm === 'control',
      ...extra,
    });
    const view = (skipped?: string) => ({ method: 'GET', path: '/a', decodedBytes: 2, contentHash: skipped ? '' : 'same', ...(skipped ? { skipped } : {}) });
    const outcomes = [
      outcome('control', 'r1', { response: view(), body: Buffer.from('{}').toString('base64') }),
      outcome('treatment', 'r1', { response: view(), body: Buffer.from('{}').toString('base64') }),
      outcome('control', 'r2', { response: view('br body could not be decoded') }),
      outcome('treatment', 'r2', { response: view() }),
      outcome('control', 'r3', { status: 0, errorClass: 'reset' }),
      outcome('treatment', 'r3', { response: view() }),
    ];
    const result = compareResponses(outcomes, { config });
    expect(result).toMatchObject({
      pairs: 3,
      comparedBodies: 1,
      skipped: { 'br body could not be decoded': 1, 'no response (transport error)': 1 },
      semanticAgreement: 1,
    });
  });
});

describe('endpoint inference', () => {
  it('turns ids and many-valued segments into parameters, keeps static routes', () => {
    const paths = [
      '/posts/17/comments?x=1',
      '/posts/18/comments',
      '/users/5f3c2a9e-1b2c-4d5e-8f90-123456789abc',
      '/health',
      '/posts',
      ...Array.from({ length: 10 }, (_, i) => `/by-name/user${String.fromCharCode(97 + i)}x/profile`),
      '/static/a',
      '/static/b',
    ];
    const patterns = inferEndpoints(paths.map((path) => ({ method: 'get', path })));
    expect(patterns.get('get /posts/17/comments?x=1')).toBe('GET /posts/:id/comments?x');
    expect(patterns.get('get /posts/18/comments')).toBe('GET /posts/:id/comments');
    expect(patterns.get('get /users/5f3c2a9e-1b2c-4d5e-8f90-123456789abc')).toBe('GET /users/:id');
    expect(patterns.get('get /health')).toBe('GET /health');
    expect(patterns.get('get /posts')).toBe('GET /posts');
    expect(patterns.get('get /by-name/useraax/profile') ?? patterns.get('get /by-name/userax/profile')).toBe('GET /by-name/:param/profile');
    expect(patterns.get('get /static/a')).toBe('GET /static/a');
  });

  it('keeps calls with different query parameter names apart, values aside (issue 32: json-server sorting and paging hid behind /posts)', () => {
    const paths = [
      '/posts',
      '/posts?_page=1',
      '/posts?_page=2&_limit=10',
      '/posts?_sort=id&_order=desc',
      '/posts?_order=asc&_sort=title',
      '/posts?userId=3',
      '/posts?userId=4&userId=5',
    ];
    const patterns = inferEndpoints(paths.map((path) => ({ method: 'GET', path })));
    expect(paths.map((path) => patterns.get(`GET ${path}`))).toEqual([
      'GET /posts',
      'GET /posts?_page',
      'GET /posts?_limit&_page',
      'GET /posts?_order&_sort',
      'GET /posts?_order&_sort',
      'GET /posts?userId',
      'GET /posts?userId',
    ]);
  });
});
