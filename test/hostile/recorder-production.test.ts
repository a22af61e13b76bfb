/**
 * The recorder never fails production (issue 18): what a hostile or careless
 * client sends through the sidecar reaches the upstream and back exactly as it
 * would directly, and every sampled request is accounted for.
 */
import { request as httpRequest, type RequestListener } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { describe, expect, it, onTestFinished } from 'vitest';
import { UsageError, systemClock } from '../../core/index.js';
import { CorpusWriter, REDACTED, Recorder, passOnUpstreamFailure, startSidecar } from '../../recorder/index.js';
import { rawRequest, records, sidecarFor, startServer, tempStore } from '../support/recording.js';

const echo: RequestListener = (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ url: req.url, length: Buffer.concat(chunks).length }));
  });
};

describe('the sidecar never fails production', () => {
  it('a JSON body nested 20,000 deep is answered as directly, and recorded with its secret redacted', async () => {
    const upstream = await startServer(echo);
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(upstream, store.corpus);
    const body = `${'['.repeat(20_000)}{"token":"tok123"}${']'.repeat(20_000)}`;
    const request = { method: 'POST', path: '/deep', headers: { 'content-type': 'application/json' }, body };
    const [direct, proxied] = [await rawRequest(upstream, request), await rawRequest(sidecar.url, request)];
    expect(proxied).toMatchObject({ status: direct.status, body: direct.body });
    await recorder.flush();
    const [record] = await records(store.corpus);
    expect(Buffer.from(record!.body, 'base64').toString()).toBe(body.replace('"tok123"', `"${REDACTED}"`));
    expect(recorder.accounting).toMatchObject({ sampled: 1, written: 1, dropped: 0 });
  });

  it('query-string secrets are redacted in the stored path', async () => {
    const upstream = await startServer(echo);
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(upstream, store.corpus);
    const reply = await rawRequest(sidecar.url, { method: 'GET', path: '/cb?code=1&access_token=tok123' });
    expect(JSON.parse(reply.body)).toMatchObject({ url: '/cb?code=1&access_token=tok123' });
    await recorder.flush();
    const [record] = await records(store.corpus);
    expect(record!.path).toBe('/cb?code=1&access_token=%5Bredacted%5D');
  });

  it('a malformed JSON body is forwarded untouched and stored withheld, counted', async () => {
    const upstream = await startServer(echo);
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(upstream, store.corpus);
    const reply = await rawRequest(sidecar.url, {
      method: 'POST',
      path: '/x',
      headers: { 'content-type': 'application/json' },
      body: '{"password": "hunter2"',
    });
    expect(JSON.parse(reply.body)).toMatchObject({ length: 22 });
    await recorder.flush();
    const [record] = await records(store.corpus);
    expect(record).toMatchObject({ body: '', bodyTruncated: true, bodyWithheld: true });
    expect(recorder.accounting).toMatchObject({ sampled: 1, written: 1, withheld: 1 });
    expect(await recorder.registry.getSingleMetricAsString('recorder_withheld_total')).toMatch(/recorder_withheld_total\{tier="query"\} 1/);
  });

  it('a client that aborts mid-body is counted as abandoned, and the accounting has no gap', async () => {
    let arrived!: () => void;
    const upstreamSaw = new Promise<void>((resolve) => (arrived = resolve));
    const upstream = await startServer((req) => {
      req.once('data', () => arrived());
      req.resume();
    });
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(upstream, store.corpus);
    const client = httpRequest(`${sidecar.url}/upload`, { method: 'POST', headers: { 'content-length': '1000' } });
    client.on('error', () => undefined);
    client.write('x'.repeat(100));
    await upstreamSaw;
    client.destroy();
    await expect.poll(() => recorder.accounting.sampled + recorder.accounting.abandoned, { timeout: 10_000 }).toBe(1);
    await recorder.flush();
    const { sampled, written, dropped, buffered } = recorder.accounting;
    expect(sampled - written - dropped - buffered).toBe(0);
    expect(recorder.accounting.abandoned).toBe(1);
  });

  it('a record in a write under way is still counted as buffered, so the accounting never has a gap', async () => {
    let release!: () => void;
    const store = { append: () => new Promise<void>((resolve) => (release = resolve)) } as unknown as ConstructorParameters<typeof CorpusWriter>[0]['store'];
    const writer = new CorpusWriter({ store, capacity: 10, clock: systemClock, batchSize: 1 });
    writer.offer({ id: 'r1', body: '' } as never);
    expect({ buffered: writer.buffered, written: writer.written }).toEqual({ buffered: 1, written: 0 });
    release();
    await writer.flush();
    expect({ buffered: writer.buffered, written: writer.written }).toEqual({ buffered: 0, written: 1 });
    await writer.close(0);
  });

  it('an upstream failure after the request socket is gone does not throw', () => {
    const counted: string[] = [];
    const res = { destroyed: false, writableFinished: false, socket: null, destroy: () => undefined } as unknown as Parameters<typeof passOnUpstreamFailure>[1];
    expect(() =>
      passOnUpstreamFailure({ socket: null } as never, res, Object.assign(new Error('reset'), { code: 'ECONNRESET' }), {
        upstreamError: (kind) => void counted.push(kind),
      }),
    ).not.toThrow();
    expect(counted).toEqual(['reset']);
  });

  it('an upstream URL with a path prefixes every forwarded path', async () => {
    const upstream = await startServer(echo);
    const { store } = await tempStore();
    const { sidecar } = await sidecarFor(`${upstream}/api/`, store.corpus);
    const reply = await rawRequest(sidecar.url, { method: 'GET', path: '/users?x=1' });
    expect(JSON.parse(reply.body)).toMatchObject({ url: '/api/users?x=1' });
  });

  it('a busy port is a usage error naming the address, and nothing is left running', async () => {
    const busy = createNetServer().listen(0, '127.0.0.1');
    await once(busy, 'listening');
    onTestFinished(() => void busy.close());
    const port = (busy.address() as AddressInfo).port;
    const { store } = await tempStore();
    const recorder = new Recorder({ tier: 'query', store: store.corpus, clock: systemClock, rate: 1, log: () => undefined });
    const error = await startSidecar({ recorder, upstream: 'http://127.0.0.1:1', port }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(`cannot listen on 127.0.0.1:${port} (proxy): the address is in use`);
    // The recorder was closed with it: its writer takes no more records (its timer no longer holds the process).
    expect(recorder.writer.offer({} as never)).toBe(false);
  });
});
