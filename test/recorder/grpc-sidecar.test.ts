/**
 * gRPC through the recording sidecar: a real @grpc/grpc-js client talks to a
 * real @grpc/grpc-js server once directly and once through the sidecar, and
 * must see the same answers, statuses and trailers; each sampled call is one
 * corpus record holding its method, redacted metadata, request messages,
 * response messages, status and trailers. HTTP/1.1 keeps working on the same port.
 */
import { get as httpsGet } from 'node:https';
import { connect } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { frameMessage, splitMessages } from '../../net/index.js';
import { catalogClient, itemFor, startCatalog } from '../support/grpc-service.js';
import { pollUntil } from '../support/poll.js';
import { selfSignedIdentity } from '../support/tls-identity.js';
import { rawRequest, records, sidecarFor, startServer, tempStore } from '../support/recording.js';

const hostOf = (url: string): string => new URL(url).host;

describe('the sidecar with gRPC over cleartext HTTP/2', () => {
  it('passes unary and server-streaming calls, errors and trailers through unchanged, and records each call whole', async () => {
    const upstream = await startCatalog({ missing: ['gone'], trailer: { 'x-served-by': 'catalog-1' } });
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(`http://${upstream}`, store.corpus);
    const direct = catalogClient(upstream);
    const proxied = catalogClient(hostOf(sidecar.url));

    for (const client of [direct, proxied]) {
      const found = await client.lookup('42', { authorization: 'Bearer secret-token', 'x-request-id': 'r-1', 'trace-bin': Buffer.from([0, 1, 2, 255]) });
      expect(found.item).toEqual(itemFor('42'));
      expect(found.trailers['x-served-by']).toBe('catalog-1');
      const missing = await client.lookup('gone');
      expect(missing.error?.code).toBe(5);
      expect(missing.error?.details).toBe('no item gone');
      expect(missing.trailers['x-served-by']).toBe('catalog-1');
      const listed = await client.list(3);
      expect(listed.items).toEqual([itemFor('0'), itemFor('1'), itemFor('2')]);
      expect(listed.status).toBe(0);
    }
    // A call is recorded when its exchange closes, just after the client has its answer.
    await pollUntil(
      async () => recorder.accounting.sampled,
      (n) => n >= 3,
      { what: 'three recorded calls' },
    );
    await recorder.close();
    const recorded = await records(store.corpus);
    expect(recorder.accounting).toMatchObject({ sampled: 3, written: 3, dropped: 0 });
    expect(recorded).toHaveLength(3);
    const byId = (id: string) => recorded.find((r) => r.grpc?.method === 'Lookup' && Buffer.from(r.body, 'base64').includes(Buffer.from(id)));
    const lookup = byId('42')!;
    expect(lookup).toMatchObject({
      method: 'POST',
      path: '/tandem.test.Catalog/Lookup',
      grpc: { service: 'tandem.test.Catalog', method: 'Lookup', requestMessages: 1, status: 0, statusMessage: 'OK', responseTruncated: false },
    });
    expect(lookup.headers.authorization).toBe('[redacted]');
    expect(lookup.headers['x-request-id']).toBe('r-1');
    expect(Buffer.from(lookup.headers['trace-bin']!, 'base64')).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(lookup.headers[':path']).toBeUndefined();
    expect(lookup.grpc!.trailers['x-served-by']).toBe('catalog-1');
    expect(lookup.grpc!.responseMessages).toHaveLength(1);
    // The body is the request's message stream exactly as sent.
    expect(splitMessages(Buffer.from(lookup.body, 'base64')).messages).toHaveLength(1);
    const gone = byId('gone')!;
    expect(gone.grpc).toMatchObject({ status: 5, statusMessage: 'no item gone', responseMessages: [] });
    // A trailers-only answer: its status and metadata, without HTTP/2's `:status`.
    expect(gone.grpc!.trailers).toMatchObject({ 'grpc-status': '5', 'x-served-by': 'catalog-1' });
    expect(gone.grpc!.trailers[':status']).toBeUndefined();
    const stream = recorded.find((r) => r.grpc?.method === 'List')!;
    expect(stream.grpc!.responseMessages).toHaveLength(3);
    expect(recorder.accounting).toMatchObject({ sampled: 3, written: 3, dropped: 0 });
  });

  it('serves HTTP/1.1 on the same port', async () => {
    const upstream = await startServer((req, res) => res.end(`plain ${req.url}`));
    const { store } = await tempStore();
    const { sidecar } = await sidecarFor(upstream, store.corpus);
    const answer = await rawRequest(sidecar.url, { method: 'GET', path: '/x?y=1' });
    expect(answer).toMatchObject({ status: 200, body: 'plain /x?y=1' });
  });

  it('passes an upstream that dies mid-response on as a failed stream, and still answers the next call', async () => {
    // A raw HTTP/2 upstream that resets one path's stream mid-response.
    const { createServer } = await import('node:http2');
    const server = createServer();
    server.on('stream', (stream, headers) => {
      stream.on('error', () => undefined);
      if (headers[':path'] === '/tandem.test.Catalog/Reset') {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
        stream.write(frameMessage(Buffer.from('partial')).subarray(0, 6));
        stream.write(Buffer.alloc(0), () => stream.session?.destroy());
        return;
      }
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(frameMessage(Buffer.from('whole')));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(`http://127.0.0.1:${port}`, store.corpus);
    const session = connect(sidecar.url);
    try {
      const call = (path: string) =>
        new Promise<{ rstCode: number; trailers?: Record<string, unknown>; body: Buffer }>((resolve) => {
          const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
          const chunks: Buffer[] = [];
          let trailers: Record<string, unknown> | undefined;
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('trailers', (t) => (trailers = t));
          stream.on('error', () => undefined);
          stream.on('close', () => resolve({ rstCode: stream.rstCode ?? 0, ...(trailers ? { trailers } : {}), body: Buffer.concat(chunks) }));
          stream.end(frameMessage(Buffer.from('ask')));
        });
      const reset = await call('/tandem.test.Catalog/Reset');
      // The client got the partial message and no trailers: a failed call, never a made-up status.
      expect(reset.trailers).toBeUndefined();
      expect(reset.body).toEqual(frameMessage(Buffer.from('partial')).subarray(0, 6));
      const whole = await call('/tandem.test.Catalog/Whole');
      expect(whole.rstCode).toBe(0);
      expect(whole.trailers?.['grpc-status']).toBe('0');
      expect(whole.body).toEqual(frameMessage(Buffer.from('whole')));
    } finally {
      session.destroy();
      server.close();
    }
    await pollUntil(
      async () => recorder.accounting.sampled,
      (n) => n >= 2,
      { what: 'two recorded calls' },
    );
    await recorder.close();
    const recorded = await records(store.corpus);
    const reset = recorded.find((r) => r.grpc?.method === 'Reset')!;
    expect(reset.grpc).toMatchObject({ status: -1, responseTruncated: true, responseMessages: [] });
    expect(recorded.find((r) => r.grpc?.method === 'Whole')!.grpc).toMatchObject({ status: 0, responseMessages: [Buffer.from('whole').toString('base64')] });
  });
});

describe('the sidecar with hostile HTTP/2 traffic', () => {
  it('survives thousands of streams opened and reset at once, and answers the next call', async () => {
    const upstream = await startCatalog();
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(`http://${upstream}`, store.corpus, { rate: 0.001 });
    const session = connect(sidecar.url);
    session.on('error', () => undefined);
    // Rapid reset (CVE-2023-44487): open a stream and cancel it at once, 2,000 times.
    for (let i = 0; i < 2_000 && !session.destroyed; i++) {
      const stream = session.request({ ':method': 'POST', ':path': '/tandem.test.Catalog/Lookup', 'content-type': 'application/grpc', te: 'trailers' });
      stream.on('error', () => undefined);
      stream.close(8);
    }
    session.destroy();
    const answer = await catalogClient(hostOf(sidecar.url)).lookup('after');
    expect(answer.item).toEqual(itemFor('after'));
    expect(recorder.accounting.dropped).toBe(0);
  });

  it('passes an HTTP/2 request that is not gRPC through, recorded as an HTTP request; a compressed message without grpc-encoding is kept as truncated', async () => {
    const { createServer } = await import('node:http2');
    const server = createServer();
    server.on('stream', (stream, headers) => {
      stream.on('error', () => undefined);
      if (headers['content-type'] === 'application/grpc') {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        stream.end(frameMessage(Buffer.from('zipped?'), true)); // flagged compressed, no grpc-encoding
        return;
      }
      stream.respond({ ':status': 201, 'content-type': 'text/plain' });
      stream.end(`plain ${headers[':path']}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(`http://127.0.0.1:${(server.address() as { port: number }).port}`, store.corpus);
    const session = connect(sidecar.url);
    try {
      const ask = (headers: Record<string, string>, body: Buffer) =>
        new Promise<{ status: number; body: string }>((resolve) => {
          const stream = session.request({ ':method': 'POST', ...headers });
          let status = 0;
          const chunks: Buffer[] = [];
          stream.on('response', (h) => (status = Number(h[':status'])));
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', () => undefined);
          stream.on('close', () => resolve({ status, body: Buffer.concat(chunks).toString('latin1') }));
          stream.end(body);
        });
      expect(await ask({ ':path': '/upload?x=1', 'content-type': 'text/plain' }, Buffer.from('hello'))).toEqual({ status: 201, body: 'plain /upload?x=1' });
      const zipped = await ask({ ':path': '/tandem.test.Catalog/Zipped', 'content-type': 'application/grpc', te: 'trailers' }, frameMessage(Buffer.from('q')));
      expect(zipped.body).toBe(frameMessage(Buffer.from('zipped?'), true).toString('latin1'));
    } finally {
      session.destroy();
      server.close();
    }
    await pollUntil(
      async () => recorder.accounting.sampled,
      (n) => n >= 2,
      { what: 'two recorded requests' },
    );
    await recorder.close();
    const recorded = await records(store.corpus);
    const plain = recorded.find((r) => r.path === '/upload?x=1')!;
    expect(plain.grpc).toBeUndefined();
    expect(Buffer.from(plain.body, 'base64').toString()).toBe('hello');
    expect(recorded.find((r) => r.grpc?.method === 'Zipped')!.grpc).toMatchObject({ status: 0, responseTruncated: true, responseMessages: [] });
  });
});

describe('the sidecar over TLS', () => {
  it('serves gRPC (HTTP/2 by ALPN) and HTTPS (HTTP/1.1) on one port, and records the calls', async () => {
    const upstream = await startCatalog();
    const plain = await startServer((req, res) => res.end(`plain ${req.url}`));
    const { store } = await tempStore();
    const tls = await selfSignedIdentity();
    const { sidecar, recorder } = await sidecarFor(`http://${upstream}`, store.corpus, {}, { tls });
    expect(sidecar.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const client = catalogClient(hostOf(sidecar.url), {}, grpc.credentials.createSsl(tls.cert));
    expect((await client.lookup('secure')).item).toEqual(itemFor('secure'));
    // HTTP/1.1 over TLS on the same port, to a plain upstream of its own.
    const { sidecar: https1 } = await sidecarFor(plain, store.corpus, {}, { tls });
    const answer = await new Promise<string>((resolve, reject) => {
      httpsGet(`${https1.url}/hello`, { ca: tls.cert }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(`${res.statusCode} ${text}`));
      }).on('error', reject);
    });
    expect(answer).toBe('200 plain /hello');
    await pollUntil(
      async () => recorder.accounting.sampled,
      (n) => n >= 1,
      { what: 'the recorded call' },
    );
    await recorder.close();
    expect((await records(store.corpus)).find((r) => r.grpc?.method === 'Lookup')).toBeDefined();
  });
});
