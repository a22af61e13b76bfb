/**
 * Issue 69, finding 6: silent TLS connections to the sidecar were never closed (20 of them still open after 70 s),
 * where cleartext ones are closed after 30 s without a first byte. A TLS connection is now handed to its server
 * with its first bytes, as a cleartext one is, and closed when it stays silent as long.
 */
import { once } from 'node:events';
import { createServer as createHttpServer, get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { connect as h2Connect, createServer as createH2Server, type ClientHttp2Session } from 'node:http2';
import { connect as netConnect, type AddressInfo, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { describe, expect, it, onTestFinished } from 'vitest';
import { protocolListener, tlsProtocolListener, type ProtocolListener } from '../../net/index.js';
import { selfSignedIdentity } from '../support/tls-identity.js';

const SILENT_MS = 300;

async function listening(listener: ProtocolListener): Promise<number> {
  listener.server.listen(0, '127.0.0.1');
  await once(listener.server, 'listening');
  onTestFinished(() => {
    for (const socket of listener.sockets) socket.destroy();
    return new Promise<void>((resolve) => listener.server.close(() => resolve()));
  });
  return (listener.server.address() as AddressInfo).port;
}

function servers(): { http1: ReturnType<typeof createHttpServer>; http2: ReturnType<typeof createH2Server> } {
  const http1 = createHttpServer((_req, res) => res.end('one'));
  const http2 = createH2Server();
  http2.on('stream', (stream) => {
    stream.respond({ ':status': 200 });
    stream.end('two');
  });
  return { http1, http2 };
}

async function get(session: ClientHttp2Session): Promise<string> {
  const stream = session.request({ ':path': '/' });
  let body = '';
  stream.on('data', (chunk: Buffer) => (body += chunk.toString()));
  await once(stream, 'end');
  return body;
}

async function http1Get(origin: string): Promise<string> {
  const get = origin.startsWith('https:') ? httpsGet : httpGet;
  return new Promise((resolve, reject) => {
    get(`${origin}/`, { rejectUnauthorized: false, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.once('end', () => resolve(body));
    }).once('error', reject);
  });
}

/** Resolves once the server has closed a connection that never said a word. */
async function closedWhileSilent(socket: Socket): Promise<void> {
  socket.on('error', () => undefined);
  await once(socket, 'close');
}

describe('connections that stay silent', () => {
  for (const tls of [false, true]) {
    it(`are closed ${tls ? 'over TLS, like cleartext ones' : 'in cleartext'}, and a connection in use is not`, async () => {
      const { http1, http2 } = servers();
      const id = tls ? await selfSignedIdentity() : undefined;
      const port = await listening(
        id ? tlsProtocolListener(http1, http2, id, { firstBytesTimeoutMs: SILENT_MS }) : protocolListener(http1, http2, { firstBytesTimeoutMs: SILENT_MS }),
      );
      const origin = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
      // In use first: its last request is answered before the silent ones connect.
      const active = h2Connect(origin, { rejectUnauthorized: false });
      onTestFinished(() => active.close());
      expect(await get(active)).toBe('two');
      const silent = tls
        ? (['h2', 'http/1.1'] as const).map((alpn) => tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false, ALPNProtocols: [alpn] }))
        : [netConnect(port, '127.0.0.1'), netConnect(port, '127.0.0.1')];
      await Promise.all(silent.map(closedWhileSilent));
      // The silent ones waited out the timeout after the active one's last request: it still answers.
      expect(active.closed || active.destroyed).toBe(false);
      expect(await get(active)).toBe('two');
      // HTTP/1.1 over the same listener still answers, handed over with its first bytes too.
      expect(await http1Get(origin)).toBe('one');
    });
  }
});
