import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { systemClock, type Clock, type CorpusRecord } from '../../core/index.js';
import { MUTATIONS, fuzz, mutateRequest } from '../../harness/index.js';
import { seededRandom } from '../../core/index.js';

const record = (id: string, body: unknown): CorpusRecord => ({
  id,
  tier: 'svc',
  timeMs: 0,
  method: 'POST',
  path: '/score?user=7',
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(JSON.stringify(body)).toString('base64'),
  bodyTruncated: false,
  sampleRate: 1,
  sampleMode: 'uniform',
});

const corpus = [record('a', { user: { id: 7, name: 'ann' }, items: [1, 2, 3], k: 3 }), record('b', { user: { id: 8, name: 'bob' }, items: [4], k: 1 })];

/** A service with the bugs fuzzing should find: 500 when `k` is not a number, a lying content type on huge strings. */
async function buggyService(
  handler?: (req: IncomingMessage, res: ServerResponse, body: string) => boolean,
): Promise<{ url: string; requests: () => number; close: () => Promise<void>; crash: () => void }> {
  let requests = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      if (req.url === '/healthz') return res.end('ok');
      requests++;
      if (handler?.(req, res, body)) return;
      let parsed: { k?: unknown; user?: { name?: unknown } };
      try {
        parsed = JSON.parse(body) as typeof parsed;
      } catch {
        res.statusCode = 400;
        return res.end('bad json');
      }
      if (parsed === null || typeof parsed !== 'object') {
        res.statusCode = 400;
        return res.end('not an object');
      }
      if (typeof parsed.k !== 'number') {
        res.statusCode = 500;
        return res.end('TypeError: k.toFixed is not a function');
      }
      res.setHeader('content-type', 'application/json');
      if (typeof parsed.user?.name === 'string' && parsed.user.name.length > 1000) return res.end('{"truncated":');
      res.end(JSON.stringify({ ok: true }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
    // What a process crash looks like from outside: every connection dropped and the port closed.
    crash: () => {
      server.close();
      server.closeAllConnections();
    },
  };
}

describe('fuzz mode', () => {
  it('mutates deterministically from the seed, covering types, sizes, missing fields and unicode', () => {
    const first = MUTATIONS.map((m) => mutateRequest(corpus[0]!, m, seededRandom(9)));
    const again = MUTATIONS.map((m) => mutateRequest(corpus[0]!, m, seededRandom(9)));
    expect(again).toEqual(first);
    const byName = Object.fromEntries(MUTATIONS.map((m, i) => [m, first[i]!]));
    expect(byName['huge-string']!.body.length).toBeGreaterThan(1_000_000);
    expect(byName['empty-body']!.body).toBe('');
    expect(() => JSON.parse(byName['malformed-json']!.body)).toThrow();
    expect(byName['query-value']!.path).not.toBe('/score?user=7');
    expect(JSON.parse(byName['missing-field']!.body)).not.toEqual(JSON.parse(Buffer.from(corpus[0]!.body, 'base64').toString()));
  });

  it('flags 5xx and contract violations, stays within its request bound, and is reproducible', async () => {
    const service = await buggyService();
    onTestFinished(() => service.close());
    const report = await fuzz({ url: service.url, records: corpus, seed: 11, maxRequests: 120, concurrency: 4 });
    expect(report.sent).toBe(120);
    // Node itself answers 431 to the 100 kB query strings, so not every request reaches the handler.
    expect(service.requests()).toBeLessThanOrEqual(120);
    expect(Object.values(report.byStatus).reduce((a, b) => a + b, 0)).toBe(120);
    expect(report.stoppedBy).toBe('count');
    expect(report.aliveAfter).toBe(true);
    expect(report.findingsByKind['5xx']).toBeGreaterThan(0);
    expect(report.findings.find((f) => f.kind === '5xx')!.message).toMatch(/k\.toFixed is not a function/);
    expect(report.findingsByKind.property).toBeGreaterThan(0);
    expect(report.findings.find((f) => f.kind === 'property')!.message).toMatch(/json-contract: 2xx response declared JSON but did not parse/);
    const again = await fuzz({ url: service.url, records: corpus, seed: 11, maxRequests: 120, concurrency: 1 });
    expect(again.byMutation).toEqual(report.byMutation);
    expect(again.findingsByKind).toEqual(report.findingsByKind);
  });

  it('is bounded in time when the SUT stalls', async () => {
    // Each answer takes 300 ms of the fuzzer's clock: past the 500 ms bound after the second one.
    let nowMs = 1_000_000;
    const clock: Clock = { now: () => nowMs, monotonic: () => nowMs, sleep: (ms, signal) => systemClock.sleep(ms, signal) };
    const service = await buggyService((_req, res) => {
      nowMs += 300;
      res.end('{}');
      return true;
    });
    onTestFinished(() => service.close());
    const report = await fuzz({ url: service.url, records: corpus, seed: 1, maxRequests: 10_000, maxDurationMs: 500, concurrency: 2, clock });
    expect(report.stoppedBy).toBe('time');
    // Two answers reach the bound; at most two more were in flight when it was seen.
    expect(report.sent).toBeGreaterThanOrEqual(2);
    expect(report.sent).toBeLessThanOrEqual(4);
  });

  it('reports a crash when the SUT stops answering, and stops', async () => {
    let crash = (): void => undefined;
    const service = await buggyService((req, _res, body) => {
      if (!body.includes('AAAAAAAAAA')) return false;
      req.socket.destroy();
      crash();
      return true;
    });
    crash = service.crash;
    onTestFinished(() => service.close().catch(() => undefined));
    const report = await fuzz({ url: service.url, records: corpus, seed: 5, maxRequests: 300, concurrency: 1 });
    expect(report.stoppedBy).toBe('crash');
    expect(report.aliveAfter).toBe(false);
    expect(report.findingsByKind.crash).toBe(1);
    expect(report.findings.find((f) => f.kind === 'crash')!.message).toMatch(/the SUT no longer answers/);
    expect(report.sent).toBeLessThan(300);
  });
});
