/** One HTTP/2 exchange as a gRPC client sees it, for the gRPC benchmark: response headers, body bytes, trailers, how it ended. */
import { constants, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { frameMessage } from '../../net/index.js';

export interface SeenExchange {
  readonly headers?: Record<string, unknown>;
  readonly body: string;
  readonly trailers?: Record<string, unknown>;
  /** The stream ended without its response, or was reset. */
  readonly failed: boolean;
  /** It never reached the server (refused, or its connection was going away first): safe to send again. */
  readonly retryable: boolean;
}

/** Headers that belong to the connection or the clock, not to the exchange. */
const VOLATILE = new Set(['date']);
const stable = (h: IncomingHttpHeaders): Record<string, unknown> => Object.fromEntries(Object.entries(h).filter(([k]) => !VOLATILE.has(k)));

export function exchange(session: ClientHttp2Session, path: string, message: string, timeoutMs = 20_000): Promise<SeenExchange> {
  return new Promise((resolve) => {
    let headers: Record<string, unknown> | undefined;
    let trailers: Record<string, unknown> | undefined;
    const chunks: Buffer[] = [];
    let stream;
    try {
      stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
    } catch {
      return resolve({ body: '', failed: true, retryable: true });
    }
    const timer = setTimeout(() => stream.close(constants.NGHTTP2_CANCEL), timeoutMs);
    stream.on('response', (h) => (headers = stable(h)));
    stream.on('trailers', (t) => (trailers = stable(t)));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', () => undefined);
    stream.on('close', () => {
      clearTimeout(timer);
      const code = stream.rstCode ?? 0;
      const complete = code === 0 && stream.readableEnded && (trailers !== undefined || headers?.['grpc-status'] !== undefined);
      resolve({
        ...(headers ? { headers } : {}),
        body: Buffer.concat(chunks).toString('base64'),
        ...(trailers ? { trailers } : {}),
        failed: !complete,
        retryable: headers === undefined && (code === constants.NGHTTP2_REFUSED_STREAM || session.destroyed || session.closed),
      });
    });
    stream.end(frameMessage(Buffer.from(message)));
  });
}
