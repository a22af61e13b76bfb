/**
 * The sidecar's HTTP/2 side (cleartext, prior knowledge — what gRPC clients
 * speak to an `http://` target): every stream is passed through to the
 * upstream unchanged (net/h2-forward.ts), over one upstream session per
 * client session, so a `GOAWAY` from the upstream reaches exactly the client
 * whose connection it ends. A sampled gRPC call is recorded whole when its
 * response ends — request messages, response messages, status and trailers;
 * a sampled HTTP/2 request that is not gRPC is recorded as an HTTP request.
 * Recording only copies bytes as they pass; records are built in a worker
 * thread and nothing waits for them.
 */
import {
  constants,
  createServer,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type Http2Server,
  type IncomingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import {
  BodyCopy,
  forwardStream,
  forwardableHeaders,
  grpcMethodOf,
  H2SessionPool,
  isGrpcContentType,
  ResetBudget,
  transportFailureOf,
  transportLimits,
  withHeaderLimits,
} from '../net/index.js';
import type { Recorder } from './recorder.js';
import { withoutPseudo } from './grpc-capture.js';

/** A stream's error is read from its close. */
const ignoreError = (): void => undefined;

export interface H2SidecarSide {
  readonly server: Http2Server;
  close(): void;
}

export function h2SidecarSide(recorder: Recorder, upstreamOrigin: string, pathPrefix: string): H2SidecarSide {
  const authority = new URL(upstreamOrigin).host;
  // One upstream session per client session (net/h2-session-pool.ts).
  const upstreams = new H2SessionPool<ServerHttp2Session>({
    onSession: (session, upstream) => {
      // The upstream ends this connection: so does the client's, with the upstream's code. Streams the client sent
      // before it saw the GOAWAY still get an upstream: a new connection.
      upstream.on('goaway', (code: number) => {
        if (!session.closed && !session.destroyed) session.goaway(code);
      });
      upstream.on('error', (error) => recorder.upstreamError(transportFailureOf(error) === 'refused' ? 'refused' : 'reset'));
    },
  });
  const upstreamFor = (session: ServerHttp2Session): ClientHttp2Session => upstreams.get(session, upstreamOrigin);

  const limits = transportLimits().http2;
  const server = createServer(withHeaderLimits({ settings: { maxConcurrentStreams: limits.maxConcurrentStreams } }));
  server.on('session', (session: ServerHttp2Session) => {
    session.on('error', () => undefined);
    session.once('close', () => upstreams.release(session));
  });
  // Upstream streams open for each client connection: never more than the client may have open itself, however
  // fast it resets streams whose upstream stream is still closing.
  const openUpstream = new Map<ServerHttp2Session, number>();
  const opened = (session: ServerHttp2Session, up: ClientHttp2Stream | undefined): void => {
    if (!up) return;
    openUpstream.set(session, (openUpstream.get(session) ?? 0) + 1);
    up.once('close', () => {
      const left = (openUpstream.get(session) ?? 1) - 1;
      if (left > 0) openUpstream.set(session, left);
      else openUpstream.delete(session);
    });
  };

  // Streams a client reset before their answer while their upstream streams were open (net/reset-budget.ts).
  const resets = new WeakMap<ServerHttp2Session, ResetBudget>();
  const clientLeft =
    (session: ServerHttp2Session) =>
    (answered: boolean): void => {
      if (answered || session.destroyed) return;
      let budget = resets.get(session);
      if (!budget) resets.set(session, (budget = new ResetBudget({ burst: limits.resetBurst, perSecond: limits.resetsPerSecond }, recorder.now())));
      if (budget.spend(recorder.now())) return;
      recorder.connectionOverResetBudget();
      session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM);
      session.destroy();
    };

  // A stream is passed on at the next turn of the loop, once the client's bytes read with its HEADERS are handled:
  // one it reset in the same read (HTTP/2 rapid reset, CVE-2023-44487) is gone by then and never opened upstream.
  // One turn for all the streams of a read, not one per stream: a flood's read holds thousands of them.
  let waiting: [ServerHttp2Stream, IncomingHttpHeaders, number][] = [];
  const passWaiting = (): void => {
    const batch = waiting;
    waiting = [];
    for (const [stream, headers, flags] of batch) passOn(stream, headers, flags);
  };
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number) => {
    // Its error (a reset, a refusal at GOAWAY) is read from its close; unhandled it would end the process.
    stream.on('error', ignoreError);
    if (waiting.push([stream, headers, flags]) === 1) setImmediate(passWaiting);
  });
  const passOn = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number): void => {
    const session = stream.session as ServerHttp2Session | undefined;
    if (stream.destroyed || stream.closed || !session) return recorder.resetBeforeForwarding();
    if ((openUpstream.get(session) ?? 0) >= limits.maxConcurrentStreams) {
      stream.close(constants.NGHTTP2_REFUSED_STREAM);
      return recorder.resetBeforeForwarding();
    }
    const path = headers[':path'] ?? '/';
    const plain = withoutPseudo(headers);
    const sampled = recorder.shouldRecord(path, plain);
    const upstreamHeaders = {
      ...forwardableHeaders(headers, (n) => n === ':method' || n === ':scheme'),
      ':path': `${pathPrefix}${path}`,
      ':authority': authority,
    };
    const endStream = (flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0;
    const onClientLeft = clientLeft(session);
    if (!sampled) return opened(session, forwardStream(stream, upstreamHeaders, endStream, upstreamFor(session), { onClientLeft }));
    const timeMs = recorder.now();
    const request = new BodyCopy(recorder.maxBodyBytes);
    const response = new BodyCopy(recorder.maxBodyBytes);
    let responseHeaders: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders | undefined;
    const call = isGrpcContentType(headers['content-type']) ? grpcMethodOf(path) : undefined;
    const keepResponse = call !== undefined && recorder.keepsResponses(call.service, call.method);
    const up = forwardStream(stream, upstreamHeaders, endStream, upstreamFor(session), {
      onClientLeft,
      onRequestData: (chunk) => request.add(chunk),
      onResponseHeaders: (h) => (responseHeaders = h),
      ...(keepResponse ? { onResponseData: (chunk: Buffer) => response.add(chunk) } : {}),
      onTrailers: (t) => (trailers = t),
      onEnd: ({ complete, requestFinished }) => {
        // A request the client never finished never reached the upstream whole: not a record.
        if (requestFinished) {
          // Only bytes are copied here; the record is built off the event loop (record-thread.ts).
          const captured = { timeMs, method: headers[':method'] ?? 'POST', url: path, headers: plain, body: request.bytes(), truncated: request.truncated };
          if (!call) recorder.record(captured);
          else
            recorder.record({
              ...captured,
              grpcCopy: { ...call, responseHeaders, trailers, responseBody: response.truncated || !keepResponse ? undefined : response.bytes(), complete },
            });
        } else recorder.abandon();
        // Recorder.record has posted the bytes to its worker.
        request.release();
        response.release();
      },
    });
    opened(session, up);
  };
  return {
    server,
    close() {
      upstreams.destroyAll();
    },
  };
}
