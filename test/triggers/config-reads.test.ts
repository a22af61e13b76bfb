import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { systemClock, type ConfigRead } from '../../core/index.js';
import { createLocalStore, type Store } from '../../store/index.js';
import { ConfigReadReporter, httpConfigReadSink, startIngestServer } from '../../triggers/index.js';

async function tempStore(): Promise<Store> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-config-reads-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return createLocalStore({ dir });
}

describe('config read reporter', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: Date.UTC(2026, 10, 30, 12) });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('batches reads per interval, one entry per (file, setting) with the latest time, and keeps a failed batch', async () => {
    const batches: (readonly ConfigRead[])[] = [];
    let fail = false;
    const reporter = new ConfigReadReporter({
      service: 'ranking',
      clock: systemClock,
      flushIntervalMs: 1_000,
      sink: async (reads) => (fail ? Promise.reject(new Error('down')) : void batches.push(reads)),
    });
    reporter.read('config/ranking.yaml', 'model.depth');
    await vi.advanceTimersByTimeAsync(100);
    reporter.read('config/ranking.yaml', 'model.depth');
    reporter.read('config/ranking.yaml');
    expect(batches).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(batches).toHaveLength(1);
    expect(batches[0]).toEqual([
      { service: 'ranking', file: 'config/ranking.yaml', setting: 'model.depth', timeMs: Date.UTC(2026, 10, 30, 12) + 100 },
      { service: 'ranking', file: 'config/ranking.yaml', setting: '', timeMs: Date.UTC(2026, 10, 30, 12) + 100 },
    ]);
    fail = true;
    reporter.read('config/other.yaml');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(reporter.failedFlushes).toBe(1);
    fail = false;
    await reporter.close();
    expect(batches[1]!.map((r) => r.file)).toEqual(['config/other.yaml']);
  });
});

describe('ingest endpoint', () => {
  it('stores posted reads, requires the bearer token when configured, and rejects bad entries naming them', async () => {
    const store = await tempStore();
    const server = await startIngestServer({
      host: '127.0.0.1',
      port: 0,
      token: 's3cret',
      sink: (reads) => store.configReads.append(reads),
      clock: systemClock,
    });
    onTestFinished(() => server.close());
    const post = async (body: string, token?: string) => {
      const response = await request(`${server.url}/config-reads`, { method: 'POST', body, headers: token ? { authorization: `Bearer ${token}` } : {} });
      return { status: response.statusCode, body: (await response.body.json()) as { error?: string; accepted?: number } };
    };
    expect((await post('[]')).status).toBe(401);
    expect((await post('[]', 'wrong')).status).toBe(401);
    expect(await post('[{"service":"ranking","file":"config/a.yaml"},{"service":"","file":"x"}]', 's3cret')).toEqual({
      status: 400,
      body: { error: 'entry 1: "service" must not be empty' },
    });
    // Issue 32: -1e20 was a 503 (a client retries forever), year −1000 was stored, a long path was "must be a non-empty string".
    const bad = async (entry: object) => post(JSON.stringify([entry]), 's3cret');
    expect(await bad({ service: 's', file: 'f', timeMs: -1e20 })).toEqual({
      status: 400,
      body: { error: 'entry 0: "timeMs" must be whole epoch milliseconds from 0 (1970) to now, got -100000000000000000000' },
    });
    expect((await bad({ service: 's', file: 'f', timeMs: Date.UTC(-1000, 0, 1) })).status).toBe(400);
    expect((await bad({ service: 's', file: 'f', timeMs: 1.5 })).status).toBe(400);
    expect(await bad({ service: 's', file: 'x'.repeat(5_000) })).toEqual({
      status: 400,
      body: { error: 'entry 0: "file" must be at most 4096 characters, got 5000' },
    });
    expect(await bad({ service: 's', file: `a/${'b'.repeat(1_001)}.yaml` })).toEqual({ status: 202, body: { accepted: 1 } });
    expect(await bad({ service: 's', file: 'a\u001b[2J' })).toEqual({ status: 400, body: { error: 'entry 0: "file" must not contain control characters' } });
    expect(await bad({ service: 7, file: 'f' })).toEqual({ status: 400, body: { error: 'entry 0: "service" must be a string, got number' } });
    expect((await post('{"service":"x"}\nnot json', 's3cret')).body.error).toMatch(/line 2: not JSON/);
    expect(await post('{"service":"ranking","file":"config/a.yaml","setting":"model.depth"}\n{"service":"search","file":"config/a.yaml"}', 's3cret')).toEqual({
      status: 202,
      body: { accepted: 2 },
    });
    // Nothing of a rejected request was stored.
    const latest = await store.configReads.latest({ sinceMs: 0 });
    expect(
      latest
        .filter((r) => r.service !== 's')
        .map((r) => `${r.service} ${r.file} ${r.setting}`)
        .sort(),
    ).toEqual(['ranking config/a.yaml model.depth', 'search config/a.yaml ']);
    // Too big: the body is drained, so the client reads the 413 rather than a reset connection.
    expect((await post('x'.repeat(1_100_000), 's3cret')).status).toBe(413);
  });

  it('takes batches from the reporter library over HTTP', async () => {
    const store = await tempStore();
    const server = await startIngestServer({ host: '127.0.0.1', port: 0, sink: (reads) => store.configReads.append(reads), clock: systemClock });
    onTestFinished(() => server.close());
    const reporter = new ConfigReadReporter({ service: 'ranking', clock: systemClock, flushIntervalMs: 60_000, sink: httpConfigReadSink(server.url) });
    reporter.read('config/ranking.yaml', 'model.depth');
    await reporter.close();
    expect(await store.configReads.latest({ sinceMs: 0, service: 'ranking' })).toMatchObject([{ file: 'config/ranking.yaml', setting: 'model.depth' }]);
  });
});
