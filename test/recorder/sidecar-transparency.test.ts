/**
 * The sidecar's transparency suite: every protocol feature a client may use is
 * sent once straight to the upstream and once through the sidecar, and what the
 * client sees must be the same — status and reason, headers (less the
 * per-connection ones), body, trailers and informational (1xx) responses.
 */
import { request as httpRequest, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { records, sidecarFor, startServer, tempStore } from '../support/recording.js';

/** Headers that belong to one connection, or to the clock, not to the exchange. */
const PER_CONNECTION = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

interface Seen {
  readonly informational: { status: number; headers: Record<string, unknown> }[];
  readonly status: number;
  readonly statusMessage: string;
  readonly headers: [string, string][];
  readonly body: string;
  readonly trailers: [string, string][];
  readonly upgraded?: string;
}

function exchangeHeaders(raw: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < raw.length; i += 2) if (!PER_CONNECTION.has(raw[i]!.toLowerCase())) out.push([raw[i]!.toLowerCase(), raw[i + 1]!]);
  return out;
}

function pairs(raw: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i]!.toLowerCase(), raw[i + 1]!]);
  return out;
}

/** One exchange as a client sees it. `waitForContinue`: send the body only after `100 Continue` (as curl does for uploads). */
function exchange(
  base: string,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: string; waitForContinue?: boolean; upgradeSend?: string },
): Promise<Seen> {
  return new Promise((resolve, reject) => {
    const informational: Seen['informational'] = [];
    const req = httpRequest(`${base}${options.path ?? '/'}`, { method: options.method ?? 'GET', headers: options.headers, agent: false });
    req.on('information', (info) => informational.push({ status: info.statusCode, headers: info.headers }));
    req.on('error', reject);
    const collect = (res: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          informational,
          status: res.statusCode ?? 0,
          statusMessage: res.statusMessage ?? '',
          headers: exchangeHeaders(res.rawHeaders),
          body: Buffer.concat(chunks).toString(),
          trailers: pairs(res.rawTrailers),
        }),
      );
      res.on('error', reject);
    };
    req.on('response', collect);
    req.on('upgrade', (res: IncomingMessage, socket: Duplex, head: Buffer) => {
      const chunks: Buffer[] = [head];
      socket.on('data', (c: Buffer) => {
        chunks.push(c);
        if (Buffer.concat(chunks).toString().toLowerCase().includes('<end>')) socket.end();
      });
      socket.on('close', () =>
        resolve({
          informational,
          status: res.statusCode ?? 0,
          statusMessage: res.statusMessage ?? '',
          headers: exchangeHeaders(res.rawHeaders),
          body: '',
          trailers: [],
          upgraded: Buffer.concat(chunks).toString(),
        }),
      );
      socket.write(options.upgradeSend ?? '');
    });
    if (options.waitForContinue) req.on('continue', () => req.end(options.body));
    else req.end(options.body);
  });
}

async function bothWays(
  upstream: string,
  options: Parameters<typeof exchange>[1],
): Promise<{ direct: Seen; proxied: Seen; sidecarUrl: string; recorded: () => Promise<number> }> {
  const { store } = await tempStore();
  const { sidecar, recorder } = await sidecarFor(upstream, store.corpus);
  const direct = await exchange(upstream, options);
  const proxied = await exchange(sidecar.url, options);
  return {
    direct,
    proxied,
    sidecarUrl: sidecar.url,
    recorded: async () => {
      await recorder.flush();
      return (await records(store.corpus)).length;
    },
  };
}

const uploadEcho: RequestListener = (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () =>
    res
      .writeHead(201, 'Stored It', { 'content-type': 'text/plain', 'x-got': String(Buffer.concat(chunks).length) })
      .end(`got ${Buffer.concat(chunks).toString().slice(0, 10)}`),
  );
};

describe('sidecar transparency', () => {
  it('passes Expect: 100-continue through: the upstream answers it, the body arrives, the request is recorded', async () => {
    const upstream = await startServer(uploadEcho);
    const body = 'x'.repeat(200_000);
    const { direct, proxied, recorded } = await bothWays(upstream, {
      method: 'POST',
      path: '/upload',
      headers: { expect: '100-continue', 'content-type': 'text/plain', 'content-length': String(body.length) },
      body,
      waitForContinue: true,
    });
    expect(direct.status).toBe(201);
    expect(proxied).toEqual(direct);
    expect(await recorded()).toBe(1);
  });

  it('passes on an upstream that refuses the expectation with a final status, never sending its own 100', async () => {
    const upstream = await startServer(uploadEcho, (server) =>
      server.on('checkContinue', (_req, res: ServerResponse) => res.writeHead(413, 'Too Big Here', { 'content-type': 'text/plain' }).end('no')),
    );
    const { direct, proxied } = await bothWays(upstream, {
      method: 'PUT',
      path: '/big',
      headers: { expect: '100-continue', 'content-length': '10' },
      body: '0123456789',
      waitForContinue: true,
    });
    expect(direct.status).toBe(413);
    expect(proxied).toEqual(direct);
  });

  it('passes an unknown expectation to the upstream to judge: accepted or refused by the upstream, not by the sidecar', async () => {
    const accepting = await startServer(uploadEcho, (server) =>
      server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => uploadEcho(req, res)),
    );
    const accepted = await bothWays(accepting, { method: 'POST', path: '/x', headers: { expect: 'something-else', 'content-length': '2' }, body: 'hi' });
    expect(accepted.direct.status).toBe(201);
    expect(accepted.proxied).toEqual(accepted.direct);
    const refusing = await startServer(uploadEcho);
    const refused = await bothWays(refusing, { method: 'POST', path: '/x', headers: { expect: 'something-else', 'content-length': '2' }, body: 'hi' });
    expect(refused.direct.status).toBe(417);
    expect(refused.proxied).toEqual(refused.direct);
  });

  it('passes a WebSocket upgrade through: the 101 and the bytes both ways', async () => {
    const upstream = await startServer(
      (_req, res) => res.writeHead(426, { 'content-type': 'text/plain' }).end('upgrade required'),
      (server) =>
        server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
          socket.write(
            `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${String(req.headers['sec-websocket-key'])}-ok\r\n\r\n`,
          );
          socket.write(head);
          socket.on('data', (chunk: Buffer) => socket.write(Buffer.from(chunk.toString().toUpperCase())));
          // The server's sockets allow half-open: close when the client has ended (the sidecar passes the end on).
          socket.on('end', () => socket.end());
        }),
    );
    const { direct, proxied } = await bothWays(upstream, {
      path: '/ws',
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-key': 'abc', 'sec-websocket-version': '13' },
      upgradeSend: 'hello <end>',
    });
    expect(direct.status).toBe(101);
    expect(direct.upgraded).toBe('HELLO <END>');
    expect(proxied).toEqual(direct);
  });

  it('passes on an upgrade the upstream declines, as the response it sent', async () => {
    const upstream = await startServer(
      (_req, res) => res.writeHead(200).end('plain'),
      (server) =>
        server.on('upgrade', (_req: IncomingMessage, socket: Duplex) =>
          socket.end('HTTP/1.1 400 No Upgrades\r\ncontent-type: text/plain\r\ncontent-length: 4\r\nconnection: close\r\n\r\nnope'),
        ),
    );
    const { direct, proxied } = await bothWays(upstream, { path: '/ws', headers: { connection: 'Upgrade', upgrade: 'websocket' } });
    expect(direct.status).toBe(400);
    expect(proxied).toEqual(direct);
  });

  it('passes response trailers and the Trailer header through', async () => {
    const upstream = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-checksum, x-count' });
      res.write('part one;');
      res.addTrailers([
        ['X-Checksum', 'abc123'],
        ['X-Count', '2'],
      ]);
      res.end('part two');
    });
    const { direct, proxied } = await bothWays(upstream, { path: '/t' });
    expect(direct.trailers).toEqual([
      ['x-checksum', 'abc123'],
      ['x-count', '2'],
    ]);
    expect(proxied).toEqual(direct);
  });

  it('passes 103 Early Hints (and 102 Processing) through before the final response', async () => {
    const upstream = await startServer((_req, res) => {
      res.writeProcessing();
      res.writeEarlyHints({ link: ['</style.css>; rel=preload; as=style', '</app.js>; rel=preload; as=script'], 'x-hint': 'h' });
      res.writeHead(200, 'Fine', { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] }).end('final');
    });
    const { direct, proxied } = await bothWays(upstream, { path: '/hints' });
    expect(direct.informational.map((i) => i.status)).toEqual([102, 103]);
    expect(proxied).toEqual(direct);
  });

  it('keeps the reason phrase, header order and repeated headers as the upstream sent them', async () => {
    const upstream = await startServer((_req, res) => {
      res.writeHead(299, 'Custom Reason', [
        ['X-B', '1'],
        ['X-A', '2'],
        ['X-B', '3'],
        ['Cache-Control', 'no-store'],
      ]);
      res.end('ok');
    });
    const { direct, proxied } = await bothWays(upstream, { path: '/order' });
    expect(direct.headers.filter(([name]) => name.startsWith('x-'))).toEqual([
      ['x-b', '1'],
      ['x-a', '2'],
      ['x-b', '3'],
    ]);
    expect(proxied).toEqual(direct);
  });
});
