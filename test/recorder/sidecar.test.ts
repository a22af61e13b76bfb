import { request as httpRequest, type RequestListener } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { EventEmitter, once } from 'node:events';
import { stat, writeFile, unlink, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createClickHouseStore, createLocalStore } from '../../store/index.js';
import { REDACTED } from '../../recorder/index.js';
import { freePort } from '../support/free-port.js';
import { records, rawRequest, sidecarFor, startServer, tempStore } from '../support/recording.js';

const echo: RequestListener = (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes', 'set-cookie': ['a=1', 'b=2'] });
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('base64') }));
  });
};

describe('recording sidecar', () => {
  it('forwards requests and responses unchanged and records a redacted copy', async () => {
    const upstream = await startServer(echo);
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(upstream, store.corpus, { redact: { headers: ['x-api-key'], bodyFields: ['user.password'] } });
    const body = JSON.stringify({ user: { name: 'ann', password: 'hunter2' }, q: 'café ☕' });
    const direct = await rawRequest(upstream, {
      method: 'PUT',
      path: '/v1/items?q=a%20b&x=1',
      headers: { authorization: 'Bearer t', 'x-api-key': 'k', 'content-type': 'application/json', 'x-custom': 'v' },
      body,
    });
    const proxied = await rawRequest(sidecar.url, {
      method: 'PUT',
      path: '/v1/items?q=a%20b&x=1',
      headers: { authorization: 'Bearer t', 'x-api-key': 'k', 'content-type': 'application/json', 'x-custom': 'v' },
      body,
    });
    expect(proxied.status).toBe(201);
    expect(proxied.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    const seenDirect = JSON.parse(direct.body);
    const seenProxied = JSON.parse(proxied.body);
    expect(seenProxied.method).toBe('PUT');
    expect(seenProxied.url).toBe('/v1/items?q=a%20b&x=1');
    expect(seenProxied.body).toBe(seenDirect.body);
    for (const header of ['authorization', 'x-api-key', 'content-type', 'x-custom', 'content-length'])
      expect(seenProxied.headers[header]).toBe(seenDirect.headers[header]);
    await recorder.flush();
    const [record] = await records(store.corpus);
    expect(record).toMatchObject({ tier: 'query', method: 'PUT', path: '/v1/items?q=a%20b&x=1', bodyTruncated: false, sampleRate: 1, sampleMode: 'uniform' });
    expect(record!.headers).toMatchObject({ authorization: REDACTED, 'x-api-key': REDACTED, 'x-custom': 'v' });
    expect(JSON.parse(Buffer.from(record!.body, 'base64').toString())).toEqual({ user: { name: 'ann', password: REDACTED }, q: 'café ☕' });
  });

  it('streams the request body to the upstream, and the response to the client, as they come', async () => {
    const events = new EventEmitter();
    const upstream = await startServer((req, res) => {
      req.once('data', (chunk: Buffer) => {
        events.emit('upstream-got', chunk.toString());
        req.resume();
        req.once('end', () => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('first\n');
          events.once('client-got', () => res.end('second\n'));
        });
      });
    });
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(upstream, store.corpus);
    const response = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(`${sidecar.url}/stream`, { method: 'POST', headers: { 'transfer-encoding': 'chunked' } }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text === 'first\n') events.emit('client-got');
        });
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      // The second half is sent only once the upstream has the first: the sidecar did not wait for the whole body.
      events.once('upstream-got', () => req.end('half-2'));
      req.write('half-1');
    });
    expect(response).toBe('first\nsecond\n');
    await recorder.flush();
    expect(Buffer.from((await records(store.corpus))[0]!.body, 'base64').toString()).toBe('half-1half-2');
  });

  it('never records traffic that carries an experiment identity', async () => {
    const upstream = await startServer(echo);
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(upstream, store.corpus);
    await rawRequest(sidecar.url, { method: 'GET', path: '/replayed', headers: { 'x-tandem-experiment': 'exp-1' } });
    await rawRequest(sidecar.url, { method: 'GET', path: '/real' });
    await recorder.flush();
    expect((await records(store.corpus)).map((r) => r.path)).toEqual(['/real']);
    expect(await (await fetch(`${sidecar.adminUrl}/metrics`)).text()).toContain('recorder_replay_skipped_total{tier="query"} 1');
  });

  it('marks bodies over the limit truncated and stores none of them', async () => {
    const upstream = await startServer(echo);
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(upstream, store.corpus, { maxBodyBytes: 10 });
    const big = await rawRequest(sidecar.url, { method: 'POST', path: '/big', body: 'x'.repeat(100) });
    expect(Buffer.from(JSON.parse(big.body).body, 'base64').toString()).toBe('x'.repeat(100));
    await recorder.flush();
    expect(await records(store.corpus)).toEqual([expect.objectContaining({ path: '/big', bodyTruncated: true, body: '' })]);
  });

  it('with a full buffer drops and counts, while every request still succeeds', async () => {
    // A "ClickHouse" that accepts connections and never answers: the first write hangs, the buffer fills.
    const held: import('node:net').Socket[] = [];
    const blackHole = createNetServer((socket) => held.push(socket)).listen(0, '127.0.0.1');
    await once(blackHole, 'listening');
    onTestFinished(() => {
      for (const socket of held) socket.destroy();
      return new Promise<void>((resolve) => blackHole.close(() => resolve()));
    });
    const store = createClickHouseStore({ url: `http://127.0.0.1:${(blackHole.address() as AddressInfo).port}`, database: 'x', requestTimeoutMs: 60_000 });
    const upstream = await startServer(echo);
    const { sidecar, recorder, log } = await sidecarFor(upstream, store.corpus, { bufferRecords: 5, closeTimeoutMs: 100 });
    const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) => rawRequest(sidecar.url, { method: 'GET', path: `/r${i}` }).then((r) => r.status)));
    expect(statuses).toEqual(statuses.map(() => 201));
    // Records are built off the event loop: once built, the writer's buffer has overflowed.
    await recorder.built();
    expect(recorder.writer.dropped['buffer-full']).toBeGreaterThan(0);
    expect(recorder.sampler.effectiveRate).toBeLessThan(1);
    expect(log.some((line) => line.includes('shedding'))).toBe(true);
    const metrics = await (await fetch(`${sidecar.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/recorder_dropped_total\{reason="buffer-full",tier="query"\} [1-9]/);
    expect(metrics).toContain('recorder_forwarded_total{tier="query"} 60');
  });

  it('with the store down changes nothing for clients; the rate sheds, then recovers once writes succeed', async () => {
    const { dir } = await tempStore();
    // A file where the store's directory should be: every write fails, as a dead disk would.
    await writeFile(join(dir, 'blocked'), 'x');
    const store = createLocalStore({ dir: join(dir, 'blocked', 'inner') });
    const upstream = await startServer(echo);
    const { sidecar, recorder } = await sidecarFor(upstream, store.corpus, { recoveryIntervalMs: 0 });
    for (let i = 0; i < 5; i++) expect((await rawRequest(sidecar.url, { method: 'GET', path: `/down${i}` })).status).toBe(201);
    await recorder.flush();
    expect(recorder.writer.dropped['store-error']).toBeGreaterThan(0);
    const shedRate = recorder.sampler.effectiveRate;
    expect(shedRate).toBeLessThan(1);
    // The disk comes back.
    await unlink(join(dir, 'blocked'));
    for (let i = 0; i < 40 && recorder.sampler.effectiveRate < 1; i++) {
      await rawRequest(sidecar.url, { method: 'GET', path: `/up${i}` });
      await recorder.flush();
    }
    expect(recorder.sampler.effectiveRate).toBe(1);
    expect(recorder.writer.written).toBeGreaterThan(0);
  });

  it('passes an upstream reset or refusal on as a connection failure, and adds no timeout of its own', async () => {
    const resetting = await startServer((req) => req.socket.destroy());
    const slow = await startServer((req, res) => {
      req.resume();
      setTimeout(() => res.end('late'), 300);
    });
    const { store } = await tempStore();
    const viaResetting = await sidecarFor(resetting, store.corpus);
    const viaRefused = await sidecarFor(`http://127.0.0.1:${await freePort()}`, store.corpus);
    const viaSlow = await sidecarFor(slow, store.corpus);
    await expect(rawRequest(resetting, { method: 'GET', path: '/' })).rejects.toMatchObject({ code: 'ECONNRESET' });
    await expect(rawRequest(viaResetting.sidecar.url, { method: 'GET', path: '/' })).rejects.toMatchObject({ code: 'ECONNRESET' });
    await expect(rawRequest(viaRefused.sidecar.url, { method: 'GET', path: '/' })).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(await rawRequest(viaSlow.sidecar.url, { method: 'GET', path: '/' })).toMatchObject({ status: 200, body: 'late' });
    const metrics = await (await fetch(`${viaRefused.sidecar.adminUrl}/metrics`)).text();
    expect(metrics).toContain('recorder_upstream_errors_total{kind="refused",tier="query"} 1');
    // The failed requests were still recorded: they happened in production.
    await viaRefused.recorder.flush();
    await viaResetting.recorder.flush();
    expect((await records(store.corpus)).length).toBeGreaterThanOrEqual(2);
  });

  it('writes corpus files readable by their owner only', async () => {
    const upstream = await startServer(echo);
    const { dir, store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(upstream, store.corpus);
    await rawRequest(sidecar.url, { method: 'GET', path: '/private' });
    await recorder.flush();
    const tierDir = join(dir, '.tandem', 'corpus', 'query');
    const [file] = await readdir(tierDir);
    expect((await stat(join(tierDir, file!))).mode & 0o777).toBe(0o600);
    expect((await stat(tierDir)).mode & 0o777).toBe(0o700);
  });
});
