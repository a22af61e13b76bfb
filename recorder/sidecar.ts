/**
 * The recording sidecar: a reverse proxy that forwards every request and
 * response unchanged — method, path, query, headers (less hop-by-hop ones),
 * body, status and reason, streaming both ways, 1xx responses, trailers,
 * `Expect`, upgrades — and samples requests into the corpus.
 * test/recorder/sidecar-transparency.test.ts holds it to that.
 *
 * Transparency on failure: the sidecar adds no timeout of its own, and an
 * upstream that refuses, resets or dies mid-response is passed on as a reset
 * of the client's connection, which is what the client would have seen
 * talking to the upstream directly — not a 502 the upstream never sent.
 * Unsampled requests take the plain path: no body tee, no allocation for the decision.
 *
 * The same port serves cleartext HTTP/2 with prior knowledge, gRPC included
 * (h2-sidecar.ts): each connection's first bytes choose the protocol.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { Pool } from 'undici';
import { listenOn, listeningUrl } from '../core/index.js';
import { protocolListener, tlsProtocolListener, withoutHopByHop, type TlsIdentity, transportFailureOf } from '../net/index.js';
import type { Recorder } from './recorder.js';
import { watchBody, type BodyCapture } from './body-capture.js';
import { ResponsePassthrough } from './response-passthrough.js';
import { forwardExpectation, forwardTunnel, upstreamAgent, upstreamTarget } from './expect-and-upgrade.js';
import { h2SidecarSide } from './h2-sidecar.js';
import { adminServer } from './admin-server.js';

export interface SidecarOptions {
  readonly recorder: Recorder;
  /** Base URL of the recorded service. */
  readonly upstream: string;
  /** @default "127.0.0.1" */
  readonly host?: string;
  /** @default 0 */
  readonly port?: number;
  /** Where /metrics and /healthz are served (a separate listener, so no upstream path is shadowed). @default same host, port 0 */
  readonly adminHost?: string;
  readonly adminPort?: number;
  /** Upstream connections. @default 128 */
  readonly connections?: number;
  /** Serve TLS with this certificate and key: HTTP/2 (gRPC) or HTTP/1.1 as each client chooses by ALPN. */
  readonly tls?: TlsIdentity;
}
export interface Sidecar {
  readonly url: string;
  readonly adminUrl: string;
  close(): Promise<void>;
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
}

/** Upstream failure kinds, for the metric. */
function failureKind(error: unknown): string {
  const failure = transportFailureOf(error);
  if (failure === 'aborted') return 'client-aborted';
  if (failure !== 'other') return failure;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code !== '' ? code.toLowerCase() : 'other';
}

/**
 * An upstream failure reaches the client as the connection failure it was.
 * The request's socket may already be gone (a client that left, a socket
 * detached after the response): then there is nothing left to tell, and
 * nothing here may throw — an exception on this path would take every other
 * client's request down with the process.
 */
export function passOnUpstreamFailure(
  req: Pick<IncomingMessage, 'socket'>,
  res: Pick<ServerResponse, 'destroyed' | 'writableFinished' | 'destroy'> & { readonly socket: ServerResponse['socket'] },
  error: unknown,
  recorder: Pick<Recorder, 'upstreamError'>,
): void {
  const socket = req.socket ?? res.socket ?? null;
  if (res.destroyed && !res.writableFinished && (socket === null || socket.destroyed)) return; // the client left first
  recorder.upstreamError(failureKind(error));
  if (socket !== null) socket.destroy();
  else res.destroy();
}

/** A sampled request waiting for its body: recorded at its end, counted as abandoned if it closes first. (A class, not two closures: this is made per sampled request.) */
class PendingRecord {
  readonly #timeMs: number;
  constructor(
    readonly recorder: Recorder,
    readonly req: IncomingMessage,
    readonly url: string,
  ) {
    this.#timeMs = recorder.now();
  }

  end(capture: BodyCapture): void {
    this.recorder.record({
      timeMs: this.#timeMs,
      method: this.req.method ?? 'GET',
      url: this.url,
      headers: this.req.headers,
      body: capture.bytes(),
      truncated: capture.truncated,
    });
  }

  close(): void {
    this.recorder.abandon();
  }
}

/** The upstream's origin, and its path as a prefix of every forwarded path (`http://host/api` forwards `/x` as `/api/x`). */
function upstreamParts(upstream: string): { origin: string; prefix: string } {
  const url = new URL(upstream);
  return { origin: url.origin, prefix: url.pathname.replace(/\/+$/, '') };
}

export async function startSidecar(options: SidecarOptions): Promise<Sidecar> {
  const { recorder } = options;
  const { origin, prefix } = upstreamParts(options.upstream);
  const pool = new Pool(origin, {
    connections: options.connections ?? 128,
    // No timeouts of our own: a slow upstream must look exactly as slow to the client.
    headersTimeout: 0,
    bodyTimeout: 0,
    keepAliveTimeout: 4_000,
  });

  const target = upstreamTarget(options.upstream);
  const expectAgent = upstreamAgent(target, options.connections ?? 128);
  const fail = (req: IncomingMessage, res: ServerResponse) => (error: unknown) => passOnUpstreamFailure(req, res, error, recorder);

  /** Record the request if sampled; returns its body stream, if it has one. */
  const sample = (req: IncomingMessage, url: string): IncomingMessage | undefined => {
    const body = hasBody(req) ? req : undefined;
    if (!recorder.shouldRecord(url, req.headers)) return body; // the plain path: nothing watched, nothing allocated
    if (body) {
      // The request itself stays the body the upstream client streams (a wrapping stream per sampled request
      // cost throughput); its body is copied as it is read. A body the client never finished is not
      // recorded (it never reached the upstream whole either) and is counted as abandoned.
      watchBody(req, recorder.maxBodyBytes, new PendingRecord(recorder, req, url));
    } else {
      recorder.record({ timeMs: recorder.now(), method: req.method ?? 'GET', url, headers: req.headers, body: Buffer.alloc(0), truncated: false });
    }
    return body;
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? '/';
    const body = sample(req, url);
    pool.dispatch(
      { path: `${prefix}${url}`, method: (req.method ?? 'GET') as 'GET', headers: withoutHopByHop(req.headers), body: body ?? null },
      new ResponsePassthrough(req, res, fail(req, res)),
    );
  };
  const handleExpectation = (req: IncomingMessage, res: ServerResponse): void => {
    sample(req, req.url ?? '/');
    forwardExpectation(req, res, target, expectAgent, fail(req, res));
  };
  // Upgraded connections leave the server's bookkeeping: closing the sidecar must end them too.
  const tunnels = new Set<Duplex>();
  const handleTunnel = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    tunnels.add(socket);
    socket.once('close', () => tunnels.delete(socket));
    forwardTunnel(req, socket, head, target, (error) => {
      recorder.upstreamError(failureKind(error));
      socket.destroy();
    });
  };

  const server: Server = createServer(handle);
  server.on('checkContinue', handleExpectation);
  server.on('checkExpectation', handleExpectation);
  server.on('upgrade', handleTunnel);
  server.on('connect', handleTunnel);
  server.keepAliveTimeout = 5_000;
  const h2 = h2SidecarSide(recorder, origin, prefix);
  const listener = options.tls ? tlsProtocolListener(server, h2.server, options.tls) : protocolListener(server, h2.server);
  const admin = adminServer(recorder);
  try {
    await Promise.all([
      listenOn(listener.server, options.port ?? 0, options.host ?? '127.0.0.1', 'proxy'),
      listenOn(admin, options.adminPort ?? 0, options.adminHost ?? options.host ?? '127.0.0.1', 'admin'),
    ]);
  } catch (error) {
    // Nothing may keep the process alive after a failed start: close what did start, and the writer's timer.
    listener.server.close();
    admin.close();
    await pool.close();
    expectAgent.destroy();
    await recorder.close();
    throw error;
  }
  return {
    url: listeningUrl(listener.server, options.tls ? 'https' : 'http'),
    adminUrl: listeningUrl(admin),
    async close() {
      const closed = Promise.all([new Promise((r) => listener.server.close(r)), new Promise((r) => admin.close(r))]);
      server.closeAllConnections();
      admin.closeAllConnections();
      for (const socket of tunnels) socket.destroy();
      for (const socket of listener.sockets) socket.destroy();
      h2.close();
      await closed;
      await pool.close();
      expectAgent.destroy();
      await recorder.close();
    },
  };
}
