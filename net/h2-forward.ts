/**
 * One HTTP/2 stream passed through a proxy unchanged, for the recording
 * sidecar and the egress router alike: the request's headers (less what
 * belongs to one connection), its body with backpressure, the response's
 * informational and final headers, its body, its trailers, and how it ended —
 * a reset from either side is passed on with its own code, so a client sees
 * the upstream's `RST_STREAM(CANCEL)` or `REFUSED_STREAM`, not a status the
 * upstream never sent. A gRPC response keeps `grpc-status` where the upstream
 * put it: in trailers, or in the headers of a trailers-only response.
 */
import {
  constants,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import { isGrpcContentType } from './grpc-wire.js';
import { CONNECTION_HEADERS } from './hop-by-hop.js';

/** Headers as received, ready to send on: pseudo-headers kept or dropped by `keepPseudo`, connection-specific ones dropped (`te` may only be `trailers`). */
export function forwardableHeaders(headers: IncomingHttpHeaders, keepPseudo: (name: string) => boolean): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined || CONNECTION_HEADERS.has(name)) continue;
    if (name.startsWith(':') && !keepPseudo(name)) continue;
    if (name === 'te' && value !== 'trailers') continue;
    out[name] = value;
  }
  return out;
}

export interface ForwardTap {
  onRequestData?(chunk: Buffer): void;
  onResponseHeaders?(headers: IncomingHttpHeaders): void;
  onResponseData?(chunk: Buffer): void;
  onTrailers?(trailers: IncomingHttpHeaders): void;
  /** How the exchange ended: `rstCode` 0 and `complete` when the response ended normally. */
  /** `requestFinished`: the client sent its request's end (a request it left unfinished never reached the upstream whole). */
  onEnd?(end: { readonly complete: boolean; readonly rstCode: number; readonly requestFinished: boolean; readonly error?: Error }): void;
  /**
   * The upstream took no part in the exchange (its connection was refused, or it refused the stream) before
   * any response: return true to leave the client's stream untouched, for the caller to try elsewhere.
   */
  onUnanswered?(): boolean;
  /** The client reset or left its stream while the upstream's was still open; `answered` once response headers came. */
  onClientLeft?(answered: boolean): void;
}

/** Sessions that reached their upstream: a stream failing on one that never did was refused. */
const connected = new WeakSet<ClientHttp2Session>();

/** Whether `session` ever reached its peer (one made with watchConnection). */
export const reachedPeer = (session: ClientHttp2Session): boolean => connected.has(session);

/** Marks `session` as connected once it is: call when a session is made. */
export function watchConnection(session: ClientHttp2Session): ClientHttp2Session {
  session.once('connect', () => connected.add(session));
  return session;
}

const keepStatus = (name: string): boolean => name === ':status';
const keepNone = (): boolean => false;

/** At its readable side's end: whether the client sent its request's end, rather than leaving (reset or dropped). */
export function clientFinished(stream: ServerHttp2Stream): boolean {
  return !stream.aborted && !stream.destroyed;
}

/**
 * Forward `stream` (whose request headers were `requestHeaders`, already made
 * ready for the upstream) over `upstream`; `endStream` when the request had no body.
 * Returns the upstream stream, or undefined when the session could not open one (the client's stream is reset).
 */
export function forwardStream(
  stream: ServerHttp2Stream,
  requestHeaders: OutgoingHttpHeaders,
  endStream: boolean,
  upstream: ClientHttp2Session,
  tap: ForwardTap = {},
  bufferedBody?: Buffer,
): ClientHttp2Stream | undefined {
  let up: ClientHttp2Stream;
  try {
    up = upstream.request(requestHeaders, { endStream: bufferedBody !== undefined ? bufferedBody.length === 0 : endStream });
  } catch (error) {
    if (tap.onUnanswered?.() === true) return undefined;
    // A session that is closing or gone: the client sees what a closing server gives, a refused stream.
    if (!stream.destroyed) stream.close(constants.NGHTTP2_REFUSED_STREAM);
    tap.onEnd?.({ complete: false, rstCode: constants.NGHTTP2_REFUSED_STREAM, requestFinished: false, error: error as Error });
    return undefined;
  }
  let ended = false;
  // Whether the client sent its request's end (a buffered body was read whole).
  let requestFinished = endStream || bufferedBody !== undefined;
  let trailers: IncomingHttpHeaders | undefined;
  let complete = false;
  let expectsTrailers = false;
  const end = (rstCode: number, error?: Error): void => {
    if (ended) return;
    ended = true;
    tap.onEnd?.({ complete, rstCode, requestFinished, ...(error ? { error } : {}) });
  };

  let responded = false;
  if (bufferedBody !== undefined) {
    // Read whole by the caller (to fail over between targets): sent as it is.
    if (bufferedBody.length > 0) up.end(bufferedBody);
  } else if (!endStream) {
    // The body with backpressure, by hand: Readable.pipe sets up and tears down six listeners per stream, for a
    // call of one message. Node ends a stream's readable side when its connection drops too; only a client's own end
    // is passed on, so a request it never finished never reaches the upstream as a whole one (the close below resets it).
    const onRequestData = tap.onRequestData;
    stream.on('data', (chunk: Buffer) => {
      onRequestData?.(chunk);
      if (!up.write(chunk)) {
        stream.pause();
        up.once('drain', () => stream.resume());
      }
    });
    stream.once('end', () => {
      requestFinished = clientFinished(stream);
      if (requestFinished && !up.closed && !up.destroyed) up.end();
    });
  }
  // The client went away or reset its stream: the upstream's stream is reset with the same code. Node's close(code)
  // sends the request's end first; for a request the client never finished only a reset may go (destroy sends
  // INTERNAL_ERROR alone), or the upstream would take the part it has for the whole.
  stream.once('close', () => {
    if (!up.closed && !up.destroyed) {
      tap.onClientLeft?.(responded);
      if (requestFinished) up.close(stream.rstCode ?? constants.NGHTTP2_CANCEL);
      else up.destroy(new Error('the client left before it finished its request'));
    }
    end(stream.rstCode ?? 0);
  });
  stream.on('error', () => undefined);

  up.on('headers', (headers: IncomingHttpHeaders) => {
    // 1xx before the final response (103 Early Hints and the like).
    if (!stream.destroyed && !stream.headersSent) stream.additionalHeaders(forwardableHeaders(headers, keepStatus));
  });
  up.once('response', (headers: IncomingHttpHeaders, flags: number) => {
    responded = true;
    tap.onResponseHeaders?.(headers);
    if (stream.destroyed) return;
    const trailersOnly = (flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0;
    // Trailers can only be sent when asked for at the head; ask when they are expected (gRPC always ends with them).
    expectsTrailers = !trailersOnly && (isGrpcContentType(headers['content-type']) || headers.trailer !== undefined);
    const expectTrailers = expectsTrailers;
    try {
      stream.respond(forwardableHeaders(headers, keepStatus), { endStream: trailersOnly, waitForTrailers: expectTrailers });
    } catch {
      stream.close(constants.NGHTTP2_INTERNAL_ERROR);
      return;
    }
    if (expectTrailers) {
      stream.once('wantTrailers', () => {
        if (trailers !== undefined) stream.sendTrailers(forwardableHeaders(trailers, keepNone));
        else stream.close(constants.NGHTTP2_NO_ERROR);
      });
    }
  });
  up.on('trailers', (received: IncomingHttpHeaders) => {
    trailers = received;
    tap.onTrailers?.(received);
  });
  up.on('data', (chunk: Buffer) => {
    tap.onResponseData?.(chunk);
    if (stream.destroyed) return;
    if (!stream.write(chunk)) {
      up.pause();
      stream.once('drain', () => up.resume());
    }
  });
  // The client's stream is ended at the upstream's `close`, not its `end`: only then is a reset's code known.
  let endedWell = false;
  up.once('end', () => (endedWell = true));
  up.once('close', () => {
    let code = up.rstCode ?? constants.NGHTTP2_NO_ERROR;
    const unanswered = !responded && (!connected.has(upstream) || code === constants.NGHTTP2_REFUSED_STREAM);
    if (unanswered && !ended && tap.onUnanswered?.() === true) {
      ended = true; // the caller tries elsewhere and reports the end of that attempt
      return;
    }
    // Node reports a reset that arrives after the request's own end as a plain end with code 0 (the code is
    // lost); a gRPC response that ends without its trailers can only be that, or a broken upstream.
    if (code === constants.NGHTTP2_NO_ERROR && (!endedWell || (expectsTrailers && trailers === undefined))) code = constants.NGHTTP2_INTERNAL_ERROR;
    complete = code === constants.NGHTTP2_NO_ERROR;
    if (!stream.destroyed) {
      if (!complete) stream.close(code);
      else if (stream.headersSent && !stream.writableEnded) stream.end();
    }
    end(complete ? 0 : code);
  });
  up.on('error', () => undefined); // its code is read at `close`
  return up;
}
