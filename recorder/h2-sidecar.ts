/**
 * The sidecar's HTTP/2 side (cleartext, prior knowledge — what gRPC clients
 * speak to an `http://` target): every stream is passed through to the
 * upstream unchanged (core/h2-forward.ts), over one upstream session per
 * client session, so a `GOAWAY` from the upstream reaches exactly the client
 * whose connection it ends. A sampled gRPC call is recorded whole when its
 * response ends — request messages, response messages, status and trailers;
 * a sampled HTTP/2 request that is not gRPC is recorded as an HTTP request.
 * Recording only copies bytes as they pass; nothing waits for it.
 */
import { connect, constants, createServer, type ClientHttp2Session, type Http2Server, type IncomingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import { clientFinished, forwardStream, grpcEndingOf, forwardableHeaders, grpcMethodOf, isGrpcContentType, splitMessages, uncompressedPayload } from '../core/index.js';
import { withHeaderLimits } from '../net/index.js';
import type { Recorder } from './recorder.js';
import type { CapturedGrpcResponse } from './record-builder.js';

/** Streams one client may have open at once (the upstream's own limit applies too). */
const MAX_CONCURRENT_STREAMS = 1_000;

/** Bytes copied up to a limit; past it, only counted. */
export class BoundedCopy {
  readonly chunks: Buffer[] = [];
  size = 0;
  constructor(readonly limit: number) {}
  add(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size <= this.limit) this.chunks.push(chunk);
  }
  get truncated(): boolean {
    return this.size > this.limit;
  }
  bytes(): Buffer {
    return this.truncated ? Buffer.alloc(0) : Buffer.concat(this.chunks);
  }
}

/** The status, its message and every response message of a finished call; messages past a problem are not kept. */
export function grpcResponseOf(
  responseHeaders: IncomingHttpHeaders,
  trailers: IncomingHttpHeaders | undefined,
  body: BoundedCopy,
  complete: boolean,
  maxMessageBytes: number,
): Omit<CapturedGrpcResponse, 'service' | 'method' | 'requestMessages'> {
  const { ending, status, message } = grpcEndingOf(responseHeaders, trailers);
  const split = body.truncated ? { messages: [], problem: 'over the body limit' } : splitMessages(body.bytes(), maxMessageBytes);
  const encoding = responseHeaders['grpc-encoding'];
  const messages: Buffer[] = [];
  let truncated = body.truncated || split.problem !== undefined || !complete;
  for (const message of split.messages) {
    try {
      messages.push(uncompressedPayload(message, typeof encoding === 'string' ? encoding : undefined, maxMessageBytes));
    } catch {
      truncated = true;
      break;
    }
  }
  // A trailers-only response's headers hold `:status` too: the pseudo-headers are HTTP/2's, not the call's.
  return { responseMessages: messages, responseTruncated: truncated, status, statusMessage: message, trailers: ending ? withoutPseudo(ending) : {} };
}

const withoutPseudo = (headers: IncomingHttpHeaders): Record<string, string | string[] | undefined> => forwardableHeaders(headers, () => false) as Record<string, string | string[] | undefined>;

export interface H2SidecarSide {
  readonly server: Http2Server;
  close(): void;
}

export function h2SidecarSide(recorder: Recorder, upstreamOrigin: string, pathPrefix: string): H2SidecarSide {
  const upstreams = new Map<ServerHttp2Session, ClientHttp2Session>();
  const authority = new URL(upstreamOrigin).host;

  const upstreamFor = (session: ServerHttp2Session): ClientHttp2Session => {
    const existing = upstreams.get(session);
    if (existing && !existing.closed && !existing.destroyed) return existing;
    const upstream = connect(upstreamOrigin, withHeaderLimits({ settings: { enablePush: false } }));
    upstreams.set(session, upstream);
    // The upstream ends this connection: so does the client's, with the upstream's code.
    upstream.on('goaway', (code: number) => {
      // Streams the client sent before it saw the GOAWAY still get an upstream: a new connection.
      if (upstreams.get(session) === upstream) upstreams.delete(session);
      if (!session.closed && !session.destroyed) session.goaway(code);
    });
    upstream.on('error', (error) => recorder.upstreamError((error as { code?: string }).code === 'ECONNREFUSED' ? 'refused' : 'reset'));
    upstream.once('close', () => {
      if (upstreams.get(session) === upstream) upstreams.delete(session);
    });
    return upstream;
  };

  const server = createServer(withHeaderLimits({ settings: { maxConcurrentStreams: MAX_CONCURRENT_STREAMS } }));
  server.on('session', (session: ServerHttp2Session) => {
    session.on('error', () => undefined);
    session.once('close', () => {
      upstreams.get(session)?.close();
      upstreams.delete(session);
    });
  });
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number) => {
    const path = headers[':path'] ?? '/';
    const plain = withoutPseudo(headers);
    const sampled = recorder.shouldRecord(path, plain);
    const upstreamHeaders = { ...forwardableHeaders(headers, (n) => n === ':method' || n === ':scheme'), ':path': `${pathPrefix}${path}`, ':authority': authority };
    const endStream = (flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0;
    if (!sampled) {
      forwardStream(stream, upstreamHeaders, endStream, upstreamFor(stream.session as ServerHttp2Session));
      return;
    }
    const timeMs = recorder.now();
    const request = new BoundedCopy(recorder.maxBodyBytes);
    const response = new BoundedCopy(recorder.maxBodyBytes);
    let responseHeaders: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders | undefined;
    let requestEnded = endStream;
    if (!endStream) stream.once('end', () => (requestEnded = clientFinished(stream)));
    const call = isGrpcContentType(headers['content-type']) ? grpcMethodOf(path) : undefined;
    forwardStream(stream, upstreamHeaders, endStream, upstreamFor(stream.session as ServerHttp2Session), {
      onRequestData: (chunk) => request.add(chunk),
      onResponseHeaders: (h) => (responseHeaders = h),
      ...(call ? { onResponseData: (chunk: Buffer) => response.add(chunk) } : {}),
      onTrailers: (t) => (trailers = t),
      onEnd: ({ complete }) => {
        // A request the client never finished never reached the upstream whole: not a record.
        if (!requestEnded) return recorder.abandon();
        const body = request.bytes();
        const captured = { timeMs, method: headers[':method'] ?? 'POST', url: path, headers: plain, body, truncated: request.truncated };
        if (!call) return recorder.record(captured);
        const requestMessages = splitMessages(body, Number.MAX_SAFE_INTEGER).messages.length;
        recorder.record({ ...captured, grpc: { ...call, requestMessages, ...grpcResponseOf(responseHeaders, trailers, response, complete, recorder.maxBodyBytes) } });
      },
    });
  });
  return {
    server,
    close() {
      for (const upstream of upstreams.values()) upstream.destroy();
      upstreams.clear();
    },
  };
}
