/**
 * What kind of transport failure an error is, read from the codes Node and undici give it: the one reading the
 * recorder's metrics, the router's answers and the replayer's error classes share.
 */
export type TransportFailure = 'timeout' | 'refused' | 'reset' | 'aborted' | 'other';

const RESET_CODES = new Set(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'ERR_HTTP2_STREAM_ERROR', 'ERR_HTTP2_SESSION_ERROR', 'ERR_HTTP2_GOAWAY_SESSION']);

export function transportFailureOf(error: unknown): TransportFailure {
  const code = (error as { code?: unknown }).code;
  const name = (error as { name?: unknown }).name;
  if (typeof code === 'string') {
    if (code === 'ECONNREFUSED') return 'refused';
    if (RESET_CODES.has(code)) return 'reset';
    // undici's headers, body and connect timeouts, and the socket's own ETIMEDOUT.
    if (code.includes('TIMEOUT') || code === 'ETIMEDOUT') return 'timeout';
    if (code === 'UND_ERR_ABORTED' || code === 'ABORT_ERR') return 'aborted';
  }
  return name === 'AbortError' ? 'aborted' : 'other';
}
