/**
 * `tandem collect`: the recorder without the proxy. An edge proxy the service already runs (nginx `mirror`, Envoy
 * `request_mirror_policies`) samples its requests and sends a copy here; this listener records the copy and answers
 * it at once, so the edge never waits for the store, and production's traffic never passes through Node at all.
 *
 * A copy is recorded under the sidecar's rules (one Recorder: second-stage sampling, skipping replayed traffic,
 * redaction off the event loop, shedding, drop accounting), marked `sampleMode: 'mirror'`: what the client finally
 * received is not known here. Only a trusted peer is recorded: one carrying the shared token when one is set,
 * otherwise one from a trusted address; the token header itself is never stored.
 *
 * The same port takes HTTP/1.1 and cleartext HTTP/2 (gRPC from nginx's `grpc_pass`), chosen by the first bytes.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createH2Server, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import { listenOn, listeningUrl } from '../core/index.js';
import { BodyCopy, grpcMethodOf, isGrpcContentType, protocolListener, transportLimits, withHeaderLimits } from '../net/index.js';
import { adminServer } from './admin-server.js';
import { watchBody } from './body-capture.js';
import { withoutPseudo } from './grpc-capture.js';
import type { CapturedRequest, Recorder } from './recorder.js';

/** The header an edge sends the shared token in (nginx: `proxy_set_header`); removed before anything is recorded. */
export const MIRROR_TOKEN_HEADER = 'x-tandem-mirror-token';

export interface CollectorOptions {
  readonly recorder: Recorder;
  /** @default "127.0.0.1" */
  readonly host?: string;
  /** @default 0 */
  readonly port?: number;
  readonly adminHost?: string;
  readonly adminPort?: number;
  /** Peers recorded without a token (when no token is set). @default loopback: 127.0.0.1 and ::1 */
  readonly trustedAddresses?: readonly string[];
  /** When set, a copy is recorded only if it carries this token in MIRROR_TOKEN_HEADER, from whatever address. */
  readonly token?: string;
}

export interface Collector {
  readonly url: string;
  readonly adminUrl: string;
  close(): Promise<void>;
}

const LOOPBACK = ['127.0.0.1', '::1'];

/** `::ffff:127.0.0.1` (an IPv4 peer on a dual-stack socket) is 127.0.0.1. */
const plainAddress = (address: string | undefined): string => (address ?? '').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');

/** Whether a copy's sender is trusted: its token compared in constant time, or else its address. */
function trustCheck(options: CollectorOptions): (address: string | undefined, headers: IncomingHttpHeaders) => boolean {
  const token = options.token === undefined ? undefined : Buffer.from(options.token);
  if (token !== undefined) {
    return (_address, headers) => {
      const given = headers[MIRROR_TOKEN_HEADER];
      if (typeof given !== 'string') return false;
      const bytes = Buffer.from(given);
      return bytes.length === token.length && timingSafeEqual(bytes, token);
    };
  }
  const trusted = new Set((options.trustedAddresses ?? LOOPBACK).map(plainAddress));
  return (address) => trusted.has(plainAddress(address));
}

function withoutToken(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  if (headers[MIRROR_TOKEN_HEADER] === undefined) return headers;
  const copy = { ...headers };
  delete copy[MIRROR_TOKEN_HEADER];
  return copy;
}

/** A gRPC call as a mirror knows it: its request, no response (grpc-capture.ts records status -1, truncated). */
function mirroredCall(path: string, headers: IncomingHttpHeaders): CapturedRequest['grpcCopy'] {
  const call = isGrpcContentType(headers['content-type']) ? grpcMethodOf(path) : undefined;
  return call && { ...call, responseHeaders: {}, trailers: undefined, responseBody: undefined, complete: false };
}

export async function startCollector(options: CollectorOptions): Promise<Collector> {
  const { recorder } = options;
  const trusted = trustCheck(options);

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const answer = (status: number): void => void res.writeHead(status, { 'content-length': '0' }).end();
    const url = req.url ?? '/';
    if (!trusted(req.socket.remoteAddress, req.headers)) {
      recorder.untrusted();
      req.resume();
      return answer(403);
    }
    const headers = withoutToken(req.headers);
    if (!recorder.shouldRecord(url, headers)) {
      req.resume();
      return answer(204);
    }
    const timeMs = recorder.now();
    // An HTTP/1.1 copy is an HTTP record, whatever its content type: gRPC reaches this port over HTTP/2 only.
    watchBody(req, recorder.maxBodyBytes, {
      end: (body) => {
        recorder.record({
          timeMs,
          method: req.method ?? 'GET',
          url,
          headers,
          body: body.bytes(),
          truncated: body.truncated,
        });
        answer(204);
      },
      close: () => recorder.abandon(),
    });
    req.resume();
  };

  const limits = transportLimits().http2;
  const h2 = createH2Server(withHeaderLimits({ settings: { maxConcurrentStreams: limits.maxConcurrentStreams } }));
  h2.on('session', (session) => session.on('error', () => undefined));
  h2.on('stream', (stream: ServerHttp2Stream, raw: IncomingHttpHeaders) => {
    stream.on('error', () => undefined);
    const path = raw[':path'] ?? '/';
    const grpc = isGrpcContentType(raw['content-type']);
    // A gRPC peer (nginx's grpc_pass) expects a call's answer: an empty trailers-only OK. Nothing reads it.
    const answer = (status: number): void => {
      if (stream.closed || stream.destroyed) return;
      stream.respond(grpc && status === 204 ? { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '0' } : { ':status': status }, {
        endStream: true,
      });
    };
    const headers = withoutToken(withoutPseudo(raw) as IncomingHttpHeaders);
    if (!trusted(stream.session?.socket?.remoteAddress, raw)) {
      recorder.untrusted();
      stream.resume();
      return answer(403);
    }
    if (!recorder.shouldRecord(path, headers)) {
      stream.resume();
      return answer(204);
    }
    const timeMs = recorder.now();
    const body = new BodyCopy(recorder.maxBodyBytes);
    let ended = false;
    stream.on('data', (chunk: Buffer) => body.add(chunk));
    stream.once('end', () => {
      ended = true;
      const grpcCopy = mirroredCall(path, headers);
      recorder.record({
        timeMs,
        method: raw[':method'] ?? 'POST',
        url: path,
        headers,
        body: body.bytes(),
        truncated: body.truncated,
        ...(grpcCopy ? { grpcCopy } : {}),
      });
      body.release();
      answer(204);
    });
    // A stream reset before its end never carried a whole request: not a record.
    stream.once('close', () => {
      if (ended) return;
      recorder.abandon();
      body.release();
    });
  });

  const http1: Server = createServer(handle);
  http1.keepAliveTimeout = 30_000;
  const listener = protocolListener(http1, h2);
  const admin = adminServer(recorder);
  try {
    await Promise.all([
      listenOn(listener.server, options.port ?? 0, options.host ?? '127.0.0.1', 'collector'),
      listenOn(admin, options.adminPort ?? 0, options.adminHost ?? options.host ?? '127.0.0.1', 'admin'),
    ]);
  } catch (error) {
    listener.server.close();
    admin.close();
    await recorder.close();
    throw error;
  }
  return {
    url: listeningUrl(listener.server),
    adminUrl: listeningUrl(admin),
    async close() {
      const closed = Promise.all([new Promise((r) => listener.server.close(r)), new Promise((r) => admin.close(r))]);
      http1.closeAllConnections();
      admin.closeAllConnections();
      for (const socket of listener.sockets) socket.destroy();
      await closed;
      await recorder.close();
    },
  };
}
