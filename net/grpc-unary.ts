/**
 * One unary gRPC call over cleartext HTTP/2, for Tandem's own calls to a
 * service — a health check, a readiness probe — where a gRPC client library
 * would bring a channel, name resolution and retries this needs none of.
 * Bounded by its timeout; the session is closed after the call.
 */
import { connect, constants } from 'node:http2';
import { frameMessage, grpcEndingOf, splitMessages } from './grpc-wire.js';

export interface UnaryAnswer {
  /** `grpc-status`; -1 when the call ended without one. */
  readonly status: number;
  readonly message: string;
  /** The response message's payload, when there was one. */
  readonly payload?: Buffer;
}

export function grpcUnaryCall(url: string, path: string, request: Uint8Array, timeoutMs: number): Promise<UnaryAnswer> {
  return new Promise((resolve, reject) => {
    const session = connect(url, { settings: { enablePush: false } });
    let settled = false;
    const finish = (error: Error | undefined, answer?: UnaryAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      session.destroy();
      if (error) reject(error);
      else resolve(answer!);
    };
    const timer = setTimeout(() => finish(new Error(`no answer from ${url}${path} within ${timeoutMs} ms`)), timeoutMs);
    session.on('error', (error) => finish(error));
    const stream = session.request({
      ':method': 'POST',
      ':path': path,
      'content-type': 'application/grpc',
      te: 'trailers',
      'grpc-timeout': `${Math.max(1, Math.floor(timeoutMs))}m`,
    });
    const chunks: Buffer[] = [];
    let ending: Record<string, unknown> | undefined;
    stream.on('response', (headers) => {
      if (headers['grpc-status'] !== undefined) ending = headers;
    });
    stream.on('trailers', (trailers) => (ending = trailers));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', (error) => finish(error));
    stream.on('close', () => {
      if (stream.rstCode !== undefined && stream.rstCode !== constants.NGHTTP2_NO_ERROR && ending === undefined)
        return finish(new Error(`${url}${path}: stream reset (code ${stream.rstCode})`));
      const { status, message } = grpcEndingOf(undefined, ending);
      const payload = splitMessages(Buffer.concat(chunks)).messages[0]?.payload;
      finish(undefined, { status, message, ...(payload ? { payload } : {}) });
    });
    stream.end(frameMessage(request));
  });
}
