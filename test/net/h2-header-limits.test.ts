/**
 * Issue 69, finding 3: the sidecar's HTTP/2 sessions used Node's default limits (128 header pairs, 64 KB header
 * list), so calls that an upstream accepts failed only through the sidecar (reset with ENHANCE_YOUR_CALM,
 * REFUSED_STREAM or FRAME_SIZE_ERROR). The upstream here accepts what grpc-go does by default; every call is made
 * once direct and once through each of Tandem's HTTP/2 hops (the recording sidecar, the egress router) and must end
 * alike.
 */
import { connect, createServer, type Http2Server, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCommandConfig, processContext } from '../../cli/cli-context.js';
import { TRANSPORT_DEFAULTS } from '../../core/index.js';
import { configureTransport } from '../../net/index.js';
import { sidecarFor, tempStore } from '../support/recording.js';
import { router } from '../support/router-harness.js';

/** grpc-go's default header list limit, and as many pairs as fit in it. */
const UPSTREAM_LIST_BYTES = 16 << 20;
const UPSTREAM_PAIRS = 100_000;

interface Outcome {
  readonly status: number | string;
  readonly requestPairs?: number;
  readonly responsePairs: number;
  readonly trailerBytes: number;
}

/** An upstream that says how many metadata entries it received, and answers with the headers and trailers asked for. */
async function startUpstream(): Promise<string> {
  const server: Http2Server = createServer({
    maxHeaderListPairs: UPSTREAM_PAIRS,
    maxSendHeaderBlockLength: UPSTREAM_LIST_BYTES,
    settings: { maxHeaderListSize: UPSTREAM_LIST_BYTES },
  });
  server.on('stream', (stream, headers: IncomingHttpHeaders) => {
    const received = Object.keys(headers).filter((name) => name.startsWith('x-meta-')).length;
    const responseHeaders: OutgoingHttpHeaders = { ':status': 200, 'content-type': 'application/grpc', 'x-received': String(received) };
    for (let i = 0; i < Number(headers['x-answer-headers'] ?? 0); i++) responseHeaders[`x-answer-${i}`] = `v${i}`;
    stream.respond(responseHeaders, { waitForTrailers: true });
    stream.on('wantTrailers', () =>
      stream.sendTrailers({ 'grpc-status': '0', 'grpc-status-details-bin': 'A'.repeat(Number(headers['x-trailer-bytes'] ?? 1)) }),
    );
    stream.end(Buffer.from([0, 0, 0, 0, 0]));
    stream.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** One call by a client that accepts as much as grpc-go does, as a gRPC client would make it. */
async function call(origin: string, metadata: Record<string, string>): Promise<Outcome> {
  const session = connect(origin, {
    maxHeaderListPairs: UPSTREAM_PAIRS,
    maxSendHeaderBlockLength: UPSTREAM_LIST_BYTES,
    settings: { maxHeaderListSize: UPSTREAM_LIST_BYTES },
  });
  session.on('error', () => undefined);
  // A gRPC client's first call follows the server's SETTINGS: until they arrive, HTTP/2's initial limits hold.
  await new Promise((resolve) => session.once('remoteSettings', resolve));
  try {
    return await new Promise<Outcome>((resolve) => {
      const stream = session.request({
        ':method': 'POST',
        ':path': '/tandem.test.Catalog/Lookup',
        'content-type': 'application/grpc',
        te: 'trailers',
        ...metadata,
      });
      let headers: IncomingHttpHeaders = {};
      stream.on('response', (h) => (headers = h));
      stream.on('trailers', (t: IncomingHttpHeaders) => {
        const details = t['grpc-status-details-bin'];
        resolve({
          status: Number(headers[':status']),
          requestPairs: Number(headers['x-received']),
          responsePairs: Object.keys(headers).filter((n) => n.startsWith('x-answer-')).length,
          trailerBytes: typeof details === 'string' ? details.length : 0,
        });
      });
      stream.on('close', () => resolve({ status: `closed with code ${stream.rstCode}`, responsePairs: 0, trailerBytes: 0 }));
      stream.on('error', () => undefined);
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
      stream.resume();
    });
  } finally {
    session.close();
  }
}

const entries = (count: number, valueBytes = 8): Record<string, string> =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`x-meta-${i}`, 'm'.repeat(valueBytes)]));

/** The hop under test in front of the upstream: its URL. */
const hops: Record<string, (upstream: string) => Promise<string>> = {
  'the recording sidecar': async (upstream) => {
    const { store } = await tempStore();
    return (await sidecarFor(upstream, store.corpus)).sidecar.url;
  },
  'the egress router': async (upstream) => {
    const r = await router([{ name: 'catalog', policy: 'isolated', target: upstream, writes: 'allow' }]);
    return r.urls.treatment.catalog!;
  },
};

describe.each(Object.keys(hops))('HTTP/2 header limits through %s', (hop) => {
  it.each([
    ['130 request metadata entries', entries(130), { requestPairs: 130 }],
    ['200 request metadata entries', entries(200), { requestPairs: 200 }],
    ['100 KB of request metadata', entries(10, 10_000), { requestPairs: 10 }],
    ['130 response headers', { 'x-answer-headers': '130' }, { responsePairs: 130 }],
    ['trailers with a 66 KB grpc-status-details-bin', { 'x-trailer-bytes': String(66_000) }, { trailerBytes: 66_000 }],
  ])('passes %s as the upstream answers it directly', async (_name, metadata, expected) => {
    const upstream = await startUpstream();
    const through = await hops[hop]!(upstream);
    const direct = await call(upstream, metadata);
    expect(direct).toMatchObject({ status: 200, ...expected });
    expect(await call(through, metadata)).toEqual(direct);
  });
});

describe.each(Object.keys(hops))('a header list limit set in the config, through %s', (hop) => {
  it('is what the hop takes: a list over it is refused there, one under it passes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tandem-transport-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    onTestFinished(() => configureTransport(TRANSPORT_DEFAULTS));
    const config = join(dir, 'tandem.yaml');
    await writeFile(config, 'transport:\n  http2:\n    maxHeaderListBytes: 65536\n');
    await loadCommandConfig({ config }, { ...processContext(), cwd: dir });
    const upstream = await startUpstream();
    const through = await hops[hop]!(upstream);
    const over = entries(10, 10_000);
    expect(await call(upstream, over)).toMatchObject({ status: 200, requestPairs: 10 });
    expect((await call(through, over)).status).not.toBe(200);
    expect(await call(through, entries(3, 10_000))).toMatchObject({ status: 200, requestPairs: 3 });
  });
});
