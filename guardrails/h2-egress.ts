/**
 * The egress router's HTTP/2 side: gRPC (and any cleartext HTTP/2) from the
 * SUT to a dependency, under the same policy as HTTP/1 — the same decision
 * (EgressPolicy.decide: allowlist, Host, identity as metadata and `baggage`,
 * writes by gRPC method), the same body buffer and counters — forwarded stream by stream over one HTTP/2
 * session per target (net/h2-forward.ts). A refused or blocked gRPC call is
 * answered by the router itself with `PERMISSION_DENIED` and a message
 * saying why, and never reaches the dependency.
 */
import {
  constants,
  createServer,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type Http2Server,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import {
  BodyCopy,
  encodeGrpcMessage,
  forwardStream,
  forwardableHeaders,
  grpcMethodOf,
  H2SessionPool,
  isGrpcContentType,
  withHeaderLimits,
  transportLimits,
  GRPC_STATUS,
} from '../net/index.js';
import type { Decision, EgressPolicy, Listener } from './egress-policy.js';

/** How often calls past their dependency's timeout are looked for. */
const SWEEP_MS = 100;
const printable = (text: string): string => text.replace(/[^\x20-\x7e]/g, '?');
/** Pseudo-headers are the transport's: the policy reads the call's own headers. */
const NO_PSEUDO = (): boolean => false;

export class H2Egress {
  readonly #policy: EgressPolicy;
  /** One HTTP/2 session per target (net/h2-session-pool.ts). */
  readonly #sessions = new H2SessionPool<string>();
  readonly #next = new Map<Listener, number>();
  /** Calls in flight and when each must have ended (the dependency's timeout). */
  readonly #deadlines = new Map<ClientHttp2Stream, number>();
  #sweeper: NodeJS.Timeout | undefined;

  constructor(policy: EgressPolicy) {
    this.#policy = policy;
  }

  serverFor(listener: Listener): Http2Server {
    const server = createServer(withHeaderLimits({ settings: { maxConcurrentStreams: transportLimits().http2.maxConcurrentStreams } }));
    server.on('session', (session) => session.on('error', () => undefined));
    server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number) => this.#handle(listener, stream, headers, flags));
    return server;
  }

  close(): void {
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    this.#deadlines.clear();
    this.#sessions.destroyAll();
  }

  readonly #authorities = new Map<string, string>();

  /** A target's `host:port`, parsed once. */
  #authority(target: string): string {
    let authority = this.#authorities.get(target);
    if (authority === undefined) this.#authorities.set(target, (authority = new URL(target).host));
    return authority;
  }

  #session(target: string): ClientHttp2Session {
    return this.#sessions.get(target, target);
  }

  /** The router's own answer, as HTTP/1's: 403 for a refused or blocked call, 413 for a body over the buffer; gRPC's statuses for a gRPC call. */
  #answer(stream: ServerHttp2Stream, decision: Exclude<Decision, { kind: 'forward' }>, grpc: boolean, status: 403 | 413 = 403): void {
    stream.on('error', () => undefined);
    stream.resume();
    if (stream.destroyed) return;
    const tag = `${this.#policy.identityPrefix}${decision.kind}`;
    if (grpc) {
      const grpcStatus = status === 413 ? GRPC_STATUS.RESOURCE_EXHAUSTED : GRPC_STATUS.PERMISSION_DENIED;
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': String(grpcStatus),
          'grpc-message': encodeGrpcMessage(decision.reason),
          [tag]: printable(decision.reason),
        },
        { endStream: true },
      );
    } else {
      stream.respond({ ':status': status, 'content-type': 'text/plain', [tag]: printable(decision.reason) });
      stream.end(`${decision.reason}\n`);
    }
  }

  #handle(listener: Listener, stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number): void {
    const started = performance.now();
    const path = headers[':path'] ?? '/';
    const grpc = isGrpcContentType(headers['content-type']) ? grpcMethodOf(path) : undefined;
    const plain = forwardableHeaders(headers, NO_PSEUDO) as Record<string, string | string[] | undefined>;
    const decision = this.#policy.decide(listener, {
      method: headers[':method'] ?? 'GET',
      path,
      host: headers[':authority'] ?? headers.host ?? '',
      headers: plain,
      ...(grpc ? { grpc } : {}),
    });
    if (decision.kind !== 'forward') return this.#answer(stream, decision, isGrpcContentType(headers['content-type']));
    const { targets } = listener;
    const turn = this.#next.get(listener) ?? 0;
    this.#next.set(listener, turn + 1);
    const endStream = (flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0;
    const send = (attempt: number, body?: Buffer): void =>
      this.#send(
        listener,
        stream,
        headers,
        decision.headers,
        endStream,
        turn + attempt,
        started,
        attempt + 1 < targets.length && body !== undefined ? () => send(attempt + 1, body) : undefined,
        body,
      );
    // One target: stream the body through. Several (a pinned subset): read it whole first, to fail over between them.
    if (targets.length === 1 || endStream) return send(0, endStream && targets.length > 1 ? Buffer.alloc(0) : undefined);
    // Within the call's limit and the process's body budget (net/body-copy.ts); given back when the call ends.
    const copy = new BodyCopy(this.#policy.maxBufferedBodyBytes);
    stream.once('close', () => copy.release());
    stream.on('data', (chunk: Buffer) => copy.add(chunk));
    stream.once('end', () => {
      if (!copy.truncated) return send(0, copy.bytes());
      this.#answer(
        stream,
        { kind: 'refused', reason: this.#policy.overBuffer(listener, started, performance.now()) },
        isGrpcContentType(headers['content-type']),
        413,
      );
    });
  }

  /** One attempt at the call on target `turn` of the allowed ones; `next` tries the following target when this one took no part. */
  #send(
    listener: Listener,
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    forward: Record<string, string | string[]>,
    endStream: boolean,
    turn: number,
    started: number,
    next: (() => void) | undefined,
    body?: Buffer,
  ): void {
    const { counters, targets, dependency } = listener;
    // Spread across the allowed targets (a pinned subset); never anywhere else.
    const target = targets[turn % targets.length]!;
    counters.byTarget[target] = (counters.byTarget[target] ?? 0) + 1;
    const upstreamHeaders = {
      ...forward,
      ...(headers.te === 'trailers' ? { te: 'trailers' } : {}),
      ':method': headers[':method'] ?? 'GET',
      ':path': headers[':path'] ?? '/',
      ':scheme': 'http',
      ':authority': this.#authority(target),
    };
    const up = forwardStream(
      stream,
      upstreamHeaders,
      endStream,
      this.#session(target),
      {
        onEnd: ({ complete }) => {
          if (!complete) counters.errors++;
          counters.observe(performance.now() - started);
        },
        ...(next ? { onUnanswered: () => (next(), true) } : {}),
      },
      body,
    );
    if (up) this.#watch(up, dependency.timeout);
  }

  /**
   * The dependency's timeout, as for HTTP/1: a call that outlives it is cancelled on both sides. One sweep
   * every SWEEP_MS for all calls, not a timer per stream: `Http2Stream.setTimeout` re-arms its timer on every
   * frame, and cost the router about 12% of its calls per second (npm run bench -- grpc).
   */
  #watch(up: ClientHttp2Stream, timeoutMs: number): void {
    this.#deadlines.set(up, performance.now() + timeoutMs);
    up.once('close', () => this.#deadlines.delete(up));
    this.#sweeper ??= setInterval(() => this.#sweep(), SWEEP_MS).unref();
  }

  #sweep(): void {
    const now = performance.now();
    for (const [up, deadline] of this.#deadlines) {
      if (deadline > now) continue;
      this.#deadlines.delete(up);
      up.close(constants.NGHTTP2_CANCEL);
    }
    if (this.#deadlines.size === 0) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }
}
