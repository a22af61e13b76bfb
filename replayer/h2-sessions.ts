/**
 * The replayer's HTTP/2 transport to one arm (cleartext, prior knowledge —
 * how gRPC reaches an `http://` address): a few sessions, each carrying many
 * concurrent streams, used in turn. A session the arm closes (`GOAWAY`, a
 * dead process) is replaced on the next send; its streams in flight end as
 * resets. One exchange is reported once, as its response, trailers and how
 * it ended; the deadline is the replay's timeout or the call's own
 * `grpc-timeout`, whichever is sooner.
 */
import { constants, type ClientHttp2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { BodyCopy, H2SessionPool, reachedPeer } from '../net/index.js';

export interface H2Exchange {
  /** `:status`; 0 when no response came. */
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly trailers?: IncomingHttpHeaders;
  /** The response body: every byte hashed and counted, the first `keepBytes` kept (net/body-copy.ts). Release it once read. */
  readonly body: BodyCopy;
  /** Why no whole response came: `timeout`, `reset` (with the stream's code), `refused` (no connection). */
  readonly failure?: 'timeout' | 'reset' | 'refused';
  readonly rstCode: number;
}

export interface H2SessionsOptions {
  /** Sessions (connections) to the arm. @default 1 */
  readonly connections?: number;
  /** Streams this side opens at once on one session; the server's own limit applies too. @default 100 */
  readonly maxConcurrentStreams?: number;
}

export class H2Sessions {
  readonly #url: string;
  /** Sessions by slot, used in turn (net/h2-session-pool.ts). */
  readonly #sessions: H2SessionPool<number>;
  readonly #slots: number;
  #next = 0;
  #closed = false;

  constructor(url: string, options: H2SessionsOptions = {}) {
    this.#url = url;
    this.#slots = Math.max(1, options.connections ?? 1);
    this.#sessions = new H2SessionPool({ peerMaxConcurrentStreams: options.maxConcurrentStreams ?? 100 });
  }

  #session(): ClientHttp2Session {
    return this.#sessions.get(this.#next++ % this.#slots, this.#url);
  }

  /** Sends one request; `done` is called exactly once. */
  request(headers: OutgoingHttpHeaders, body: Buffer | null, deadlineMs: number, keepBytes: number, done: (exchange: H2Exchange) => void): void {
    let status = 0;
    let responseHeaders: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders | undefined;
    const response = new BodyCopy(keepBytes, { hash: true });
    let timedOut = false;
    let finished = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (failure: H2Exchange['failure'], rstCode: number): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      done({ status, headers: responseHeaders, ...(trailers ? { trailers } : {}), body: response, ...(failure ? { failure } : {}), rstCode });
    };
    if (this.#closed) return finish('refused', 0);
    let stream;
    try {
      stream = this.#session().request(headers, { endStream: body === null || body.length === 0 });
    } catch {
      return finish('refused', 0);
    }
    const session = stream.session as ClientHttp2Session | undefined;
    timer = setTimeout(() => {
      timedOut = true;
      stream.close(constants.NGHTTP2_CANCEL);
    }, deadlineMs);
    stream.on('response', (h: IncomingHttpHeaders) => {
      status = Number(h[':status'] ?? 0);
      responseHeaders = h;
    });
    stream.on('trailers', (t: IncomingHttpHeaders) => (trailers = t));
    stream.on('data', (chunk: Buffer) => response.add(chunk));
    stream.on('error', () => undefined); // read at close
    stream.once('close', () => {
      const code = stream.rstCode ?? 0;
      if (timedOut) return finish('timeout', code);
      if (status === 0) return finish(session !== undefined && reachedPeer(session) ? 'reset' : 'refused', code);
      // A reset after the request's end reads as code 0 in Node (see net/h2-forward.ts): a response without its end is a reset.
      finish(code !== constants.NGHTTP2_NO_ERROR || !stream.readableEnded ? 'reset' : undefined, code);
    });
    if (body !== null && body.length > 0) stream.end(body);
  }

  close(): void {
    this.#closed = true;
    this.#sessions.destroyAll();
  }
}
