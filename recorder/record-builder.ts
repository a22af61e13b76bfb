/** One place that turns a captured request into a redacted corpus record (sampled or imported). */
import { randomUUID } from 'node:crypto';
import type { CorpusRecord } from '../core/index.js';
import type { Redactor } from './redact.js';
import { grpcCallOf, redactedGrpcBody, type CopiedGrpcCall } from './grpc-capture.js';

export interface CapturedRequest {
  readonly timeMs: number;
  readonly method: string;
  /** Path and query. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Body bytes, empty for none; ignored when `truncated`. */
  readonly body: Buffer;
  /** The body exceeded the limit and was not kept. */
  readonly truncated: boolean;
  /** A gRPC call as the sidecar copied it (the request is then its call), decoded when the record is built (grpc-capture.ts). */
  readonly grpcCopy?: CopiedGrpcCall;
}

export function buildRecord(
  tier: string,
  redactor: Redactor,
  request: CapturedRequest,
  sampling: { rate: number; mode: CorpusRecord['sampleMode'] },
  maxMessageBytes = Number.MAX_SAFE_INTEGER,
): CorpusRecord {
  const grpc = request.grpcCopy && grpcCallOf(request.truncated ? Buffer.alloc(0) : request.body, request.grpcCopy, maxMessageBytes, redactor);
  const headers = redactor.headers(request.headers);
  // A truncated body is not stored at all: it could not be redacted reliably. A call's body is its messages.
  const redacted = request.truncated
    ? { body: Buffer.alloc(0) }
    : grpc !== undefined
      ? redactedGrpcBody(request.body, headers, redactor, maxMessageBytes, grpc)
      : redactor.body(request.body, headers);
  const record: { -readonly [K in keyof CorpusRecord]: CorpusRecord[K] } = {
    id: randomUUID(),
    tier,
    timeMs: request.timeMs,
    method: request.method.toUpperCase(),
    path: redactor.url(request.url),
    headers,
    body: redacted.body?.toString('base64') ?? '',
    bodyTruncated: request.truncated || redacted.withheld !== undefined,
    sampleRate: sampling.rate,
    sampleMode: sampling.mode,
  };
  if (redacted.withheld !== undefined) record.bodyWithheld = true;
  if (grpc !== undefined) {
    record.grpc = {
      service: grpc.service,
      method: grpc.method,
      requestMessages: grpc.requestMessages,
      responseMessages: grpc.responseMessages.map((m) => m.toString('base64')),
      responseTruncated: grpc.responseTruncated,
      status: grpc.status,
      statusMessage: grpc.statusMessage,
      trailers: redactor.headers(grpc.trailers),
    };
  }
  return record;
}
