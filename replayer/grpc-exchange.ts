/**
 * A gRPC record as the replayer sends it and reads its answer: the recorded
 * metadata with the trial's identity as HTTP/2 headers, the call's deadline
 * (its own `grpc-timeout`, sent on so the arm honours it, or the replay's
 * timeout, whichever is sooner), and the outcome — a status other than OK is
 * an error (`grpc`; DEADLINE_EXCEEDED is a `timeout`), a call that ended
 * without a status is a `reset`. For comparison the response messages are
 * kept with their compression undone, each length-prefixed.
 */
import { hash } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http2';
import type { CorpusRecord, ErrorClass, ResponseView } from '../core/index.js';
import { CONNECTION_HEADERS, GRPC_STATUS, decodedMessages, frameMessage, grpcEndingOf, parseGrpcTimeout } from '../net/index.js';
import type { H2Exchange } from './h2-sessions.js';

/** Recorded names that HTTP/2 forbids or the transport sets itself. */
const NOT_SENT = new Set([...CONNECTION_HEADERS, 'host', 'content-length', 'te', 'expect']);

export function grpcHeaders(
  record: CorpusRecord,
  flat: readonly string[],
  url: string,
  timeoutMs: number,
): { requestHeaders: OutgoingHttpHeaders; deadlineMs: number } {
  const requestHeaders: OutgoingHttpHeaders = { ':method': 'POST', ':path': record.path, ':scheme': 'http', ':authority': new URL(url).host, te: 'trailers' };
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = flat[i]!.toLowerCase();
    if (name.startsWith(':') || NOT_SENT.has(name)) continue;
    requestHeaders[name] = flat[i + 1]!;
  }
  requestHeaders['content-type'] ??= 'application/grpc';
  const callDeadline = parseGrpcTimeout(record.headers['grpc-timeout']);
  return { requestHeaders, deadlineMs: Math.max(1, Math.min(timeoutMs, callDeadline ?? Number.POSITIVE_INFINITY)) };
}

export interface GrpcOutcome {
  readonly errorClass: ErrorClass;
  readonly grpcStatus: number;
  readonly bodyHash: string;
  readonly body?: Buffer;
  readonly view?: ResponseView;
}

export function grpcOutcomeOf(exchange: H2Exchange, record: CorpusRecord, keepBytes: number): GrpcOutcome {
  const grpcStatus = exchange.failure === undefined ? grpcEndingOf(exchange.headers, exchange.trailers).status : -1;
  const bodyHash = exchange.status === 0 ? '' : exchange.body.digest();
  let errorClass: ErrorClass;
  if (exchange.failure !== undefined) errorClass = exchange.failure;
  else if (exchange.status >= 500) errorClass = '5xx';
  else if (exchange.status >= 400) errorClass = '4xx';
  else if (grpcStatus === GRPC_STATUS.OK) errorClass = '';
  else if (grpcStatus === GRPC_STATUS.DEADLINE_EXCEEDED) errorClass = 'timeout';
  else if (grpcStatus === -1) errorClass = 'reset';
  else errorClass = 'grpc';
  if (keepBytes <= 0 || exchange.status === 0) return { errorClass, grpcStatus, bodyHash };
  if (exchange.body.truncated) return { errorClass, grpcStatus, bodyHash, view: tooLargeToCompare(record, exchange, grpcStatus) };
  return { errorClass, grpcStatus, bodyHash, ...comparableGrpc(exchange.body.bytes(), exchange, grpcStatus, record, keepBytes) };
}

/** An answer over what the replayer reads for comparison (MAX_READ_RESPONSE_BYTES): counted and hashed, not compared. */
function tooLargeToCompare(record: CorpusRecord, exchange: H2Exchange, grpcStatus: number): ResponseView {
  const { message } = grpcEndingOf(exchange.headers, exchange.trailers);
  return {
    method: record.method,
    path: record.path,
    contentType: String(exchange.headers['content-type'] ?? ''),
    grpc: { status: grpcStatus, statusMessage: message, messages: 0 },
    decodedBytes: 0,
    contentHash: '',
    skipped: `gRPC response of ${exchange.body.size} bytes, over the ${exchange.body.limit} the replayer reads for comparison`,
  };
}

/** The messages with compression undone, re-framed, as the comparison reads them; or why they cannot be compared. */
function comparableGrpc(raw: Buffer, exchange: H2Exchange, grpcStatus: number, record: CorpusRecord, keepBytes: number): { body?: Buffer; view: ResponseView } {
  const base = {
    method: record.method,
    path: record.path,
    contentType: String(exchange.headers['content-type'] ?? ''),
    grpc: { status: grpcStatus, statusMessage: grpcEndingOf(exchange.headers, exchange.trailers).message, messages: 0 },
  };
  const encoding = exchange.headers['grpc-encoding'];
  const decoded = decodedMessages(raw, typeof encoding === 'string' ? encoding : undefined);
  if (decoded.problem !== undefined) return { view: { ...base, decodedBytes: 0, contentHash: '', skipped: `gRPC response: ${decoded.problem}` } };
  const plain = Buffer.concat(decoded.payloads.map((payload) => frameMessage(payload)));
  // A status is part of the answer: equal messages with different statuses must not hash equal.
  const contentHash = hash('sha1', `${hash('sha1', plain)}/${grpcStatus}/${base.grpc.statusMessage}`);
  const view: ResponseView = { ...base, grpc: { ...base.grpc, messages: decoded.count }, decodedBytes: plain.length, contentHash };
  return plain.length <= keepBytes ? { body: plain, view } : { view };
}
