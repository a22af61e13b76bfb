/**
 * Issue 69, finding 7: the router's HTTP/2 path had its own copy of the policy's limits — it ignored
 * `maxBufferedBodyBytes` (8 MiB, hard-coded) and answered a body over it 403 without recording its latency, where
 * HTTP/1 answered 413 and recorded it. The policy (guardrails/egress-policy.ts) is now one object both transports
 * ask: the same call over HTTP/1.1 and over HTTP/2 gets the same decision, status, counters and latency record.
 */
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { connect, createServer as createH2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BODY_BUDGET, protocolListener } from '../../net/index.js';
import { startRouter, type EgressRouter } from '../../guardrails/index.js';
import { counters, dependencies } from '../support/router-harness.js';

/** An upstream answering 200 over HTTP/1.1 and cleartext HTTP/2 on one port. */
async function bothProtocols(): Promise<string> {
  const http = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  const h2 = createH2Server();
  h2.on('stream', (stream) => {
    stream.on('error', () => undefined);
    stream.resume();
    stream.on('end', () => {
      stream.respond({ ':status': 200 });
      stream.end('ok');
    });
  });
  const listener = protocolListener(http, h2);
  await new Promise<void>((resolve) => listener.server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    for (const socket of listener.sockets) socket.destroy();
    return new Promise<void>((resolve) => listener.server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(listener.server.address() as AddressInfo).port}`;
}

interface Call {
  readonly method: string;
  readonly path: string;
  readonly body?: Buffer;
  /** A Host (HTTP/1) or :authority (HTTP/2) other than the listener's. */
  readonly host?: string;
}

/** node:http, not fetch: fetch will not send a Host of the caller's choosing. */
async function overHttp1(url: string, call: Call): Promise<{ status: number; tag: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${call.path}`, { method: call.method, ...(call.host ? { headers: { host: call.host } } : {}) }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, tag: Object.keys(res.headers).find((k) => k.startsWith('x-tandem-')) }));
    });
    req.once('error', reject);
    req.end(call.body);
  });
}

async function overHttp2(url: string, call: Call): Promise<{ status: number; tag: string | undefined }> {
  const session = connect(url);
  onTestFinished(() => session.close());
  const stream = session.request({ ':method': call.method, ':path': call.path, ...(call.host ? { ':authority': call.host } : {}) });
  stream.end(call.body);
  const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
    stream.once('response', resolve);
    stream.once('error', reject);
  });
  stream.resume();
  await new Promise((resolve) => stream.once('close', resolve));
  return { status: Number(headers[':status']), tag: Object.keys(headers).find((k) => k.startsWith('x-tandem-')) };
}

async function routerFor(target: string, shards: readonly string[]): Promise<EgressRouter> {
  const r = await startRouter({
    experimentId: 'exp-t',
    seed: 3,
    maxBufferedBodyBytes: 1_000,
    dependencies: dependencies([
      { name: 'search', policy: 'shared', target, writes: 'block' },
      { name: 'shards', policy: 'pinned', shards, pin: 2, writes: 'allow' },
    ]),
  });
  onTestFinished(() => r.close());
  return r;
}

const CASES: readonly {
  readonly name: string;
  readonly dependency: 'search' | 'shards';
  readonly call: Call;
  readonly status: number;
  readonly tag?: string;
  readonly counts: Record<string, number>;
}[] = [
  {
    name: 'a read, forwarded',
    dependency: 'search',
    call: { method: 'GET', path: '/q?x=1' },
    status: 200,
    counts: { calls: 1, errors: 0, blocked: 0, refused: 0, observed: 1 },
  },
  {
    name: 'a write where writes are blocked',
    dependency: 'search',
    call: { method: 'POST', path: '/items', body: Buffer.from('{}') },
    status: 403,
    tag: 'x-tandem-blocked',
    counts: { calls: 1, errors: 0, blocked: 1, refused: 0, observed: 0 },
  },
  {
    name: 'another Host',
    dependency: 'search',
    call: { method: 'GET', path: '/q', host: 'elsewhere.example:80' },
    status: 403,
    tag: 'x-tandem-refused',
    counts: { calls: 1, errors: 0, blocked: 0, refused: 1, observed: 0 },
  },
  {
    name: 'a body within the buffer, to a pinned subset',
    dependency: 'shards',
    call: { method: 'POST', path: '/infer', body: Buffer.alloc(900, 0x61) },
    status: 200,
    counts: { calls: 1, errors: 0, blocked: 0, refused: 0, observed: 1 },
  },
  {
    name: 'a body over the buffer, to a pinned subset',
    dependency: 'shards',
    call: { method: 'POST', path: '/infer', body: Buffer.alloc(1_001, 0x61) },
    status: 413,
    tag: 'x-tandem-refused',
    counts: { calls: 1, errors: 1, blocked: 0, refused: 0, observed: 1 },
  },
];

describe('the router over HTTP/1.1 and HTTP/2', () => {
  for (const c of CASES) {
    it(`decides, answers and counts ${c.name} alike on both`, async () => {
      const target = await bothProtocols();
      const shards = await Promise.all([0, 1, 2].map(() => bothProtocols()));
      const seen: unknown[] = [];
      for (const [transport, send] of [
        ['HTTP/1.1', overHttp1],
        ['HTTP/2', overHttp2],
      ] as const) {
        const r = await routerFor(target, shards);
        const answer = await send(r.urls.treatment[c.dependency]!, c.call);
        const counted = counters(r, 'treatment', c.dependency);
        const observed = counted.latencyBuckets!.reduce((a, b) => a + b, 0);
        seen.push({
          transport,
          status: answer.status,
          tag: answer.tag,
          counts: { calls: counted.calls, errors: counted.errors, blocked: counted.blocked, refused: counted.refused, observed },
        });
      }
      const expected = { status: c.status, tag: c.tag, counts: c.counts };
      expect(seen).toEqual([
        { transport: 'HTTP/1.1', ...expected },
        { transport: 'HTTP/2', ...expected },
      ]);
    });
  }

  it('refuses a body to buffer when the process has no more buffer for bodies, on both, and takes it once it has', async () => {
    const target = await bothProtocols();
    const shards = await Promise.all([0, 1, 2].map(() => bothProtocols()));
    const call: Call = { method: 'POST', path: '/infer', body: Buffer.alloc(900, 0x61) };
    const room = BODY_BUDGET.bytes - BODY_BUDGET.held - 500;
    expect(BODY_BUDGET.reserve(room)).toBe(true);
    const statuses: number[] = [];
    try {
      for (const send of [overHttp1, overHttp2]) statuses.push((await send((await routerFor(target, shards)).urls.treatment.shards!, call)).status);
    } finally {
      BODY_BUDGET.release(room);
    }
    for (const send of [overHttp1, overHttp2]) statuses.push((await send((await routerFor(target, shards)).urls.treatment.shards!, call)).status);
    expect(statuses).toEqual([413, 413, 200, 200]);
  });
});
