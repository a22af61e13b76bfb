/**
 * What the HTTP/2 sidecar copies of a sampled gRPC call as it passes (bytes and headers, nothing decoded), and
 * the call it becomes once the record is built off the request path (record-thread.ts): the request's messages
 * counted, the response's split and their compression undone, with a size limit per message.
 */
import type { IncomingHttpHeaders } from 'node:http2';
import { decodedMessages, forwardableHeaders, frameMessage, grpcEndingOf, splitMessages, uncompressedPayload } from '../net/index.js';
import type { RedactedBody, Redactor } from './redact.js';

/** A recorded call: what it answered, decoded. */
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

/** A sampled call as copied: the response's bytes are absent when they were over the body limit. */
export interface CopiedGrpcCall {
  readonly service: string;
  readonly method: string;
  readonly responseHeaders: IncomingHttpHeaders;
  readonly trailers: IncomingHttpHeaders | undefined;
  readonly responseBody: Buffer | undefined;
  /** The response ended normally (not reset, not cut off). */
  readonly complete: boolean;
}

/**
 * Response messages a record keeps at most; past them it is marked truncated. A stream of 40,000 one-byte messages
 * is a megabyte, within the body limit, and 40,000 strings for the recorder's loop to take in and encode; the report
 * compares 64 KiB of an answer at most.
 */
export const MAX_KEPT_RESPONSE_MESSAGES = 1_000;

/**
 * The call a copy records, its response messages redacted like request fields (Redactor.grpcMessage): messages
 * past a problem (over the limit, undecodable, cut off, unreadable JSON) are not kept.
 */
export function grpcCallOf(requestBody: Buffer, copied: CopiedGrpcCall, maxMessageBytes: number, redactor: Redactor): CapturedGrpcResponse {
  const { responseHeaders, trailers, responseBody, complete } = copied;
  const { ending, status, message } = grpcEndingOf(responseHeaders, trailers);
  const encoding = responseHeaders['grpc-encoding'];
  const decoded =
    responseBody === undefined
      ? undefined
      : decodedMessages(responseBody, typeof encoding === 'string' ? encoding : undefined, { maxMessageBytes, maxMessages: MAX_KEPT_RESPONSE_MESSAGES });
  const messages: Buffer[] = [];
  let truncated = decoded === undefined || decoded.problem !== undefined || !complete;
  for (const payload of decoded?.payloads ?? []) {
    const redacted = redactor.grpcMessage(payload, responseHeaders['content-type'], { service: copied.service, method: copied.method, direction: 'response' });
    if (redacted.body === undefined) {
      truncated = true;
      break;
    }
    messages.push(redacted.body);
  }
  return {
    service: copied.service,
    method: copied.method,
    requestMessages: splitMessages(requestBody, Number.MAX_SAFE_INTEGER).messages.length,
    responseMessages: messages,
    responseTruncated: truncated,
    status,
    statusMessage: message,
    // A trailers-only response's headers hold `:status` too: the pseudo-headers are HTTP/2's, not the call's.
    trailers: ending ? withoutPseudo(ending) : {},
  };
}

export const withoutPseudo = (headers: IncomingHttpHeaders): Record<string, string | string[] | undefined> =>
  forwardableHeaders(headers, () => false) as Record<string, string | string[] | undefined>;

/**
 * A gRPC request body with its messages' secrets replaced (Redactor.grpcMessage), framed again; the bytes as
 * sent when none held one. Withheld when a message cannot be read (cut off, undecodable, unreadable JSON).
 */
export function redactedGrpcBody(
  body: Buffer,
  headers: Readonly<Record<string, string>>,
  redactor: Redactor,
  maxMessageBytes: number,
  call?: { readonly service: string; readonly method: string },
): RedactedBody {
  const split = splitMessages(body, maxMessageBytes);
  if (split.problem !== undefined) return { withheld: `not a whole gRPC message stream (${split.problem})` };
  let changed = false;
  const framed: Buffer[] = [];
  for (const message of split.messages) {
    let payload: Buffer;
    try {
      payload = uncompressedPayload(message, headers['grpc-encoding'], maxMessageBytes);
    } catch {
      return { withheld: 'a message could not be decompressed' };
    }
    const redacted = redactor.grpcMessage(payload, headers['content-type'], call && { ...call, direction: 'request' });
    if (redacted.body === undefined) return redacted;
    // Sent again uncompressed where a secret was replaced: flag 0 is valid whatever grpc-encoding says.
    if (redacted.body !== payload) changed = true;
    // A message without secrets keeps its own frame (compressed or not): its payload is a view into `body`.
    const start = message.payload.byteOffset - body.byteOffset - 5;
    framed.push(redacted.body !== payload ? frameMessage(redacted.body) : body.subarray(start, start + 5 + message.payload.length));
  }
  return { body: changed ? Buffer.concat(framed) : body };
}
