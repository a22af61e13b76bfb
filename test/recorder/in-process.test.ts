import { createServer, type RequestListener } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { describe, expect, it, onTestFinished } from 'vitest';
import { systemClock, type CorpusRecord } from '../../core/index.js';
import { createLocalStore, type CorpusStore } from '../../store/index.js';
import { REDACTED, Recorder, readCorpusWindow, recordingHandler, recordingInterceptor } from '../../recorder/index.js';

async function localCorpus(): Promise<CorpusStore> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-inproc-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return createLocalStore({ dir }).corpus;
}

async function all(records: AsyncIterable<CorpusRecord>): Promise<CorpusRecord[]> {
  const out: CorpusRecord[] = [];
  for await (const r of records) out.push(r);
  return out;
}

async function serve(handler: RequestListener): Promise<string> {
  const server = createServer(handler).listen(0, '127.0.0.1');
  await once(server, 'listening');
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('in-process recording', () => {
  it('wraps a request handler: the handler reads its body as before, and the record has it', async () => {
    const corpus = await localCorpus();
    const recorder = new Recorder({ tier: 'api', store: corpus, clock: systemClock, rate: 1 });
    // One handler reads with async iteration, one with 'data' events, one not at all.
    const url = await serve(
      recordingHandler(recorder, (req, res) => {
        if (req.url === '/iterate') {
          void (async () => {
            let text = '';
            for await (const chunk of req) text += String(chunk);
            res.end(`got ${text}`);
          })();
        } else if (req.url === '/events') {
          let text = '';
          req.on('data', (chunk: Buffer) => (text += chunk.toString()));
          req.on('end', () => res.end(`got ${text}`));
        } else {
          res.end('ignored the body');
        }
      }),
    );
    for (const path of ['/iterate', '/events']) {
      const response = await request(`${url}${path}`, { method: 'POST', body: 'hello body', headers: { cookie: 'session=1' } });
      expect(await response.body.text()).toBe('got hello body');
    }
    await (await request(`${url}/ignore`, { method: 'POST', body: 'unread' })).body.text();
    await (await request(`${url}/get`)).body.text();
    await recorder.flush();
    const records = await all(corpus.read('api', { sinceMs: 0 }));
    const byPath = Object.fromEntries(records.map((r) => [r.path, r]));
    expect(Buffer.from(byPath['/iterate']!.body, 'base64').toString()).toBe('hello body');
    expect(Buffer.from(byPath['/events']!.body, 'base64').toString()).toBe('hello body');
    expect(byPath['/iterate']!.headers.cookie).toBe(REDACTED);
    expect(byPath['/ignore']!.bodyTruncated).toBe(true);
    expect(byPath['/get']).toMatchObject({ method: 'GET', bodyTruncated: false, body: '' });
  });

  it('records outgoing client requests through an undici interceptor', async () => {
    const corpus = await localCorpus();
    const recorder = new Recorder({ tier: 'downstream', store: corpus, clock: systemClock, rate: 1 });
    const url = await serve((req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    const agent = new Agent().compose(recordingInterceptor(recorder));
    onTestFinished(() => agent.close());
    await (
      await request(`${url}/a?b=1`, { method: 'POST', body: '{"x":1}', headers: { 'content-type': 'application/json', authorization: 'x' }, dispatcher: agent })
    ).body.text();
    await (await request(`${url}/replayed`, { headers: { 'x-tandem-experiment': 'e' }, dispatcher: agent })).body.text();
    await recorder.flush();
    expect(await all(corpus.read('downstream', { sinceMs: 0 }))).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/a?b=1',
        body: Buffer.from('{"x":1}').toString('base64'),
        headers: expect.objectContaining({ authorization: REDACTED }),
      }),
    ]);
  });
});

describe('lookback', () => {
  it('reads only records inside the window', async () => {
    const corpus = await localCorpus();
    const now = Date.UTC(2026, 10, 30, 12, 0, 0);
    const at = (hoursAgo: number): CorpusRecord => ({
      id: `r${hoursAgo}`,
      tier: 'api',
      timeMs: now - hoursAgo * 3_600_000,
      method: 'GET',
      path: `/${hoursAgo}`,
      headers: {},
      body: '',
      bodyTruncated: false,
      sampleRate: 1,
      sampleMode: 'uniform',
    });
    await corpus.append([at(6), at(4.5), at(3.9), at(1), at(0), { ...at(0), id: 'future', timeMs: now + 60_000 }]);
    const ids = (await all(readCorpusWindow(corpus, { tier: 'api', lookbackMs: 4 * 3_600_000, nowMs: now }))).map((r) => r.id);
    expect(ids).toEqual(['r3.9', 'r1', 'r0']);
    expect((await all(readCorpusWindow(corpus, { tier: 'api', lookbackMs: 4 * 3_600_000, nowMs: now, limit: 2 }))).map((r) => r.id)).toEqual(['r3.9', 'r1']);
  });
});

describe('replayed traffic', () => {
  it('is never recorded: the default experiment header and any configured one', async () => {
    const corpus = await localCorpus();
    const recorder = new Recorder({ tier: 'api', store: corpus, clock: systemClock, rate: 1, skipHeaders: ['x-tandem-experiment', 'x-replay-experiment'] });
    const url = await serve(recordingHandler(recorder, (_req, res) => res.end('ok')));
    for (const headers of [{}, { 'x-tandem-experiment': 'exp-1' }, { 'X-Replay-Experiment': 'exp-2' }])
      await (await request(`${url}/x`, { headers })).body.text();
    await recorder.flush();
    const records = [];
    for await (const r of corpus.read('api', { sinceMs: 0 })) records.push(r);
    expect(records).toHaveLength(1);
    expect(recorder.shouldRecord('/y', { 'x-replay-experiment': 'e' })).toBe(false);
  });
});
