/**
 * Issue 69, finding 2: an HTTP/2 rapid reset through the sidecar (HEADERS then RST_STREAM at once, CVE-2023-44487)
 * opened every reset stream upstream before the reset was read: the upstream did the flood's work and the sidecar's
 * memory and latency grew with it. A stream the client reset in the same read is now never opened upstream, and no
 * client connection has more upstream streams open than it may have streams itself.
 */
import { connect, createServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { TRANSPORT_DEFAULTS } from '../../core/index.js';
import { configureTransport } from '../../net/index.js';
import { rapidReset } from '../support/h2-rapid-reset.js';
import { sidecarFor, tempStore } from '../support/recording.js';

/** A cleartext HTTP/2 upstream that counts the streams opened on it and answers each. */
async function countingUpstream(): Promise<{ url: string; streams: () => number }> {
  let streams = 0;
  const server = createServer();
  server.on('stream', (stream) => {
    streams++;
    stream.on('error', () => undefined);
    stream.resume();
    stream.on('end', () => {
      if (stream.destroyed) return;
      stream.respond({ ':status': 200 });
      stream.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, streams: () => streams };
}

async function call(url: string, path: string): Promise<{ status: number; body: string }> {
  const session = connect(url);
  try {
    const stream = session.request({ ':method': 'POST', ':path': path });
    stream.end('hello');
    let body = '';
    const status = await new Promise<number>((resolve, reject) => {
      stream.once('response', (headers) => resolve(Number(headers[':status'])));
      stream.once('error', reject);
    });
    stream.on('data', (chunk: Buffer) => (body += chunk.toString()));
    await new Promise((resolve) => stream.once('close', resolve));
    return { status, body };
  } finally {
    session.close();
  }
}

const unforwardedOf = (metrics: string): number => Number(/^recorder_reset_unforwarded_total\{[^}]*\} (\d+)$/m.exec(metrics)?.[1]);
const closedOf = (metrics: string): number => Number(/^recorder_reset_budget_closed_total\{[^}]*\} (\d+)$/m.exec(metrics)?.[1]);

describe('HTTP/2 rapid reset through the sidecar', () => {
  it('opens none of the streams a client reset in the same read upstream, counts them, and keeps answering', async () => {
    const upstream = await countingUpstream();
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(upstream.url, store.corpus);
    const { streamsSent } = await rapidReset({
      port: Number(new URL(sidecar.url).port),
      connections: 2,
      streamsPerConnection: 400,
      path: '/tandem.test.Catalog/Lookup',
    });
    expect(await call(sidecar.url, '/after')).toEqual({ status: 200, body: 'ok' });
    // Only that call reached the upstream; every flood stream was counted instead.
    const metrics = await recorder.registry.metrics();
    expect({ upstream: upstream.streams(), unforwarded: unforwardedOf(metrics) }).toEqual({ upstream: 1, unforwarded: streamsSent });
  });

  it('closes a connection whose streams are reset after they were passed on faster than its budget, so a tenth of them at most reach the upstream', async () => {
    const upstream = await countingUpstream();
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(upstream.url, store.corpus);
    // Each RST_STREAM is sent once the sidecar has had a turn to pass its stream on: before the budget, about 1,030
    // of each connection's streams reached the upstream (Node's own limit ends a connection after about 1,000 resets).
    const { streamsSent } = await rapidReset({
      port: Number(new URL(sidecar.url).port),
      connections: 2,
      streamsPerConnection: 2_500,
      path: '/tandem.test.Catalog/Lookup',
      frameByFrame: true,
    });
    expect(await call(sidecar.url, '/after')).toEqual({ status: 200, body: 'ok' });
    const metrics = await recorder.registry.metrics();
    expect(closedOf(metrics)).toBeGreaterThanOrEqual(1);
    expect(upstream.streams()).toBeLessThanOrEqual(1 + streamsSent / 10);
  });

  it('takes its reset budget from the transport limits: a budget of 10 closes the connection after about 10 streams reached the upstream', async () => {
    configureTransport({ ...TRANSPORT_DEFAULTS, http2: { ...TRANSPORT_DEFAULTS.http2, resetBurst: 10, resetsPerSecond: 0.001 } });
    onTestFinished(() => configureTransport(TRANSPORT_DEFAULTS));
    const upstream = await countingUpstream();
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(upstream.url, store.corpus);
    // With the default burst of 100, about 100 of these 300 streams reach the upstream before the connection closes.
    await rapidReset({
      port: Number(new URL(sidecar.url).port),
      connections: 1,
      streamsPerConnection: 300,
      path: '/tandem.test.Catalog/Lookup',
      frameByFrame: true,
    });
    expect(await call(sidecar.url, '/after')).toEqual({ status: 200, body: 'ok' });
    expect(closedOf(await recorder.registry.metrics())).toBe(1);
    expect(upstream.streams()).toBeLessThanOrEqual(1 + 10 + 20);
  });
});
