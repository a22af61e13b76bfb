/**
 * What an imported request must be before it becomes a record: a time a store
 * can file it under, a method and header names HTTP allows. Checked at import,
 * where the file and entry can be named — not at replay, where a header name
 * with CRLF or a 100,000-character method would fail far from its cause.
 */

import { LATEST_RECORD_MS } from '../core/index.js';

// RFC 9110 §5.6.2 token characters.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// eslint-disable-next-line no-control-regex -- the characters a header value may not hold
const BAD_VALUE = /[\u0000\r\n]/;
const MAX_METHOD_LENGTH = 32;

/** Why the request cannot be imported, or undefined when it can. */
export function importProblem(request: {
  readonly timeMs: number;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
}): string | undefined {
  if (!Number.isFinite(request.timeMs) || request.timeMs < 0 || request.timeMs > LATEST_RECORD_MS) {
    return `time ${Number.isFinite(request.timeMs) ? new Date(Math.max(-8.64e15, Math.min(8.64e15, request.timeMs))).toISOString() : String(request.timeMs)} is outside 1970–9999`;
  }
  if (request.method.length > MAX_METHOD_LENGTH || !TOKEN.test(request.method))
    return `method "${request.method.slice(0, 40)}" is not an HTTP method (a token of at most ${MAX_METHOD_LENGTH} characters)`;
  for (const [name, value] of Object.entries(request.headers)) {
    if (!TOKEN.test(name)) return `header name ${JSON.stringify(name.slice(0, 60))} is not a token (control characters, spaces or separators)`;
    if (BAD_VALUE.test(value)) return `header ${name} has CR, LF or NUL in its value`;
  }
  return undefined;
}
