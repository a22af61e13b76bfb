/** One place that turns a captured request into a redacted corpus record (sampled or imported). */
import { randomUUID } from 'node:crypto';
import type { CorpusRecord } from '../core/index.js';
import type { Redactor } from './redact.js';

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
  /** What a gRPC call answered (the request is then its call). */
  readonly grpc?: CapturedGrpcResponse;
}

export interface CapturedGrpcResponse {
  readonly service: string;
  readonly method: string;
  readonly requestMessages: number;
  readonly responseMessages: readonly Buffer[];
  readonly responseTruncated: boolean;
  readonly status: number;
  readonly statusMessage: string;
  readonly trailers: Readonly<Record<string, string | string[] | undefined>>;
}

export function buildRecord(
  tier: string,
  redactor: Redactor,
  request: CapturedRequest,
  sampling: { rate: number; mode: CorpusRecord['sampleMode'] },
): CorpusRecord {
  const headers = redactor.headers(request.headers);
  // A truncated body is not stored at all: it could not be redacted reliably.
  const redacted = request.truncated ? { body: Buffer.alloc(0) } : redactor.body(request.body, headers);
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
  if (request.grpc !== undefined) {
    const { grpc } = request;
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
