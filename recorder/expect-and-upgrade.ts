/**
 * The two exchanges undici cannot proxy, passed through with node:http instead:
 *
 * - **`Expect`** (`100-continue` and any other expectation). undici refuses the
 *   header, and answering `100 Continue` ourselves would ask the client for a
 *   body the upstream may not want. The upstream judges: its `100` is passed
 *   on when it sends one, its final answer when it answers first. The client's
 *   body is piped as the client sends it (after a `100`, or after the client
 *   stops waiting, as curl does after a second), so nothing waits on us.
 * - **Upgrades** (WebSocket, `h2c`, any `Connection: Upgrade`) and **CONNECT**.
 *   The upstream's `101`/`2xx` head reaches the client byte for byte, then bytes
 *   flow both ways untouched; a declined upgrade reaches the client as the
 *   response the upstream sent. Neither is recorded: after the head they are a
 *   byte stream, not a request and response.
 */
import { Agent, request as httpRequest, type IncomingMessage, type RequestOptions, type ServerResponse, type ClientRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { withoutHopByHop } from '../net/index.js';
import { endToEndHeaders, trailerPairs, writeFinalHead, writeInformational } from './response-passthrough.js';

export interface UpstreamTarget {
  readonly hostname: string;
  readonly port: number;
  /** The upstream's path, put before every forwarded path. */
  readonly prefix: string;
  /** An https:// upstream. */
  readonly secure: boolean;
}

export function upstreamTarget(upstream: string): UpstreamTarget {
  const url = new URL(upstream);
  const secure = url.protocol === 'https:';
  return { hostname: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || (secure ? 443 : 80)), prefix: url.pathname.replace(/\/+$/, ''), secure };
}

/** A keep-alive agent for the upstream's scheme. */
export function upstreamAgent(target: UpstreamTarget, maxSockets: number): Agent {
  return target.secure ? new HttpsAgent({ keepAlive: true, maxSockets }) : new Agent({ keepAlive: true, maxSockets });
}

function requestTo(target: UpstreamTarget, options: RequestOptions): ClientRequest {
  return target.secure ? httpsRequest(options) : httpRequest(options);
}

/** A request carrying `Expect`, forwarded so the upstream answers the expectation. */
export function forwardExpectation(req: IncomingMessage, res: ServerResponse, target: UpstreamTarget, agent: Agent, onFailure: (error: unknown) => void): void {
  let settled = false;
  const upstream = requestTo(target, {
    hostname: target.hostname,
    port: target.port,
    path: `${target.prefix}${req.url ?? '/'}`,
    method: req.method,
    headers: withoutHopByHop(req.headers),
    agent,
  });
  const fail = (error: unknown): void => {
    if (settled) return;
    settled = true;
    upstream.destroy();
    onFailure(error);
  };
  upstream.on('error', fail);
  upstream.on('continue', () => res.writeContinue());
  // 'information' also fires for the 100 that 'continue' passed on.
  upstream.on('information', (info) => info.statusCode !== 100 && writeInformational(res, info.statusCode, info.statusMessage, info.rawHeaders));
  upstream.on('response', (answer: IncomingMessage) => {
    writeFinalHead(req, res, answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
    answer.on('error', fail);
    answer.pipe(res, { end: false });
    answer.on('end', () => {
      settled = true;
      if (answer.rawTrailers.length > 0) res.addTrailers(trailerPairs(answer.rawTrailers));
      res.end();
      // A final answer before the body: the upstream will not read a body we never finished sending.
      if (!req.complete) upstream.destroy();
    });
  });
  res.once('close', () => {
    if (!settled) {
      settled = true;
      upstream.destroy();
    }
  });
  upstream.flushHeaders();
  req.pipe(upstream);
}

function headText(statusCode: number, statusMessage: string | undefined, list: readonly string[]): string {
  let head = `HTTP/1.1 ${statusCode} ${statusMessage ?? ''}\r\n`;
  for (let i = 0; i < list.length; i += 2) head += `${list[i]!}: ${list[i + 1]!}\r\n`;
  return `${head}\r\n`;
}

/** An upgrade or CONNECT: the upstream's switch, then a byte tunnel; or the upstream's refusal as it sent it. */
export function forwardTunnel(req: IncomingMessage, socket: Duplex, head: Buffer, target: UpstreamTarget, onFailure: (error: unknown) => void): void {
  const isConnect = req.method === 'CONNECT';
  // An upgrade's own Connection and Upgrade headers are what it is; everything else hop-by-hop stays behind.
  const headers = isConnect
    ? withoutHopByHop(req.headers)
    : { ...withoutHopByHop(req.headers), connection: 'Upgrade', upgrade: String(req.headers.upgrade ?? '') };
  const upstream = requestTo(target, {
    hostname: target.hostname,
    port: target.port,
    path: isConnect ? (req.url ?? '/') : `${target.prefix}${req.url ?? '/'}`,
    method: req.method,
    headers,
    agent: false,
  });
  let settled = false;
  const fail = (error: unknown): void => {
    if (settled) return;
    settled = true;
    upstream.destroy();
    onFailure(error);
  };
  socket.on('error', () => upstream.destroy());
  upstream.on('error', fail);
  const tunnel = (answer: IncomingMessage, upstreamSocket: Duplex, upstreamHead: Buffer): void => {
    settled = true;
    socket.write(headText(answer.statusCode ?? 101, answer.statusMessage, answer.rawHeaders));
    if (upstreamHead.length > 0) socket.write(upstreamHead);
    if (head.length > 0) upstreamSocket.write(head);
    upstreamSocket.on('error', () => socket.destroy());
    socket.on('error', () => upstreamSocket.destroy());
    upstreamSocket.pipe(socket);
    socket.pipe(upstreamSocket);
  };
  upstream.on('upgrade', tunnel);
  upstream.on('connect', tunnel);
  upstream.on('response', (answer: IncomingMessage) => {
    // Declined: the answer as sent, its body delimited by closing (the client's socket is ours alone now).
    settled = true;
    socket.write(headText(answer.statusCode ?? 502, answer.statusMessage, [...endToEndHeaders(answer.rawHeaders, false), 'connection', 'close']));
    answer.on('error', () => socket.destroy());
    answer.pipe(socket);
  });
  upstream.end();
}
