/**
 * One port for HTTP/1.1 and cleartext HTTP/2 with prior knowledge (what gRPC
 * clients speak to an `http://` target): every connection's first bytes say
 * which it is — HTTP/2's client preface starts `PRI * HTTP/2.0`, and no
 * HTTP/1 method is `PRI` — and the connection is handed, bytes unread, to
 * the server for its protocol. Node's `http2.createServer` has no
 * `allowHTTP1` for cleartext (only the TLS server does, by ALPN), so this
 * dispatch is ours; it is the technique httpolyglot uses.
 */
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { Server as HttpServer } from 'node:http';
import type { Http2Server } from 'node:http2';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
/** A client that sends nothing is not waited on forever, over TLS or not. */
const FIRST_BYTES_TIMEOUT_MS = 30_000;

export interface ProtocolListenerOptions {
  /** How long a connection may stay silent before its first request bytes (TLS: after the handshake, which has as long). @default 30000 */
  readonly firstBytesTimeoutMs?: number;
}

export interface ProtocolListener {
  readonly server: NetServer;
  /** Every connection handed to either server, for closing them all. */
  readonly sockets: ReadonlySet<Socket>;
}

/** A net server whose connections go to `http1` or `http2` by their first bytes. */
export function protocolListener(http1: HttpServer, http2: Http2Server, options: ProtocolListenerOptions = {}): ProtocolListener {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.setTimeout(options.firstBytesTimeoutMs ?? FIRST_BYTES_TIMEOUT_MS, () => socket.destroy());
    let seen: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const compared = Math.min(seen.length, PREFACE.length);
      const isHttp2 = seen.subarray(0, compared).equals(PREFACE.subarray(0, compared));
      if (isHttp2 && compared < PREFACE.length) return; // a preface split over packets: read on
      socket.off('data', onData);
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(seen);
      (isHttp2 ? http2 : http1).emit('connection', socket);
      process.nextTick(() => socket.resume());
    };
    socket.on('data', onData);
    socket.on('error', () => socket.destroy());
  });
  return { server, sockets };
}

export interface TlsIdentity {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
}

/**
 * The same over TLS: the protocol is the one the client chose by ALPN (`h2`,
 * else HTTP/1.1), and the decrypted connection is handed to that server.
 * A client that offers neither, or no ALPN, speaks HTTP/1.1.
 */
export function tlsProtocolListener(http1: HttpServer, http2: Http2Server, identity: TlsIdentity, options: ProtocolListenerOptions = {}): ProtocolListener {
  const sockets = new Set<Socket>();
  const silentMs = options.firstBytesTimeoutMs ?? FIRST_BYTES_TIMEOUT_MS;
  const server = createTlsServer(
    { cert: identity.cert, key: identity.key, ALPNProtocols: ['h2', 'http/1.1'], handshakeTimeout: silentMs },
    (socket: TLSSocket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      // Handed over with its first bytes, as a cleartext connection is, and closed like one when silent: the servers
      // wait for a first request forever, and once HTTP/2 reads a socket itself its timer no longer sees the traffic.
      socket.setTimeout(silentMs, () => socket.destroy());
      socket.once('data', (first: Buffer) => {
        socket.setTimeout(0);
        socket.pause();
        socket.unshift(first);
        (socket.alpnProtocol === 'h2' ? http2 : http1).emit('connection', socket);
        process.nextTick(() => socket.resume());
      });
    },
  );
  server.on('tlsClientError', (_error, socket) => socket.destroy());
  return { server, sockets };
}
