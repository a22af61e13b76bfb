/**
 * What every dashboard response shares: the security headers (a strict CSP:
 * script and style from this origin only, nothing inline), replies, and how
 * an error becomes a status (bad input 400, unknown name 404, else 500).
 */
import type { ServerResponse } from 'node:http';
import { InputError, NotFoundError, UsageError } from '../core/index.js';

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

export function reply(res: ServerResponse, status: number, type: string, body: string | Buffer, extra: Readonly<Record<string, string>> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'cache-control': 'no-store', ...extra });
  res.end(body);
}

export function replyJson(res: ServerResponse, status: number, body: unknown, extra: Readonly<Record<string, string>> = {}): void {
  reply(res, status, 'application/json', JSON.stringify(body), extra);
}

export function statusOf(error: unknown): number {
  if (error instanceof NotFoundError) return 404;
  if (error instanceof InputError || error instanceof UsageError) return 400;
  return 500;
}

/**
 * What a visitor is told about a failure: the message of bad input or a missing thing (it names what they
 * sent), and for anything else only that it failed — a store error names paths on disk and hosts; those
 * details go to the operator's log.
 */
export function publicMessage(error: unknown, status: number, log: ((line: string) => void) | undefined): string {
  if (status < 500) return error instanceof Error ? error.message : String(error);
  log?.(`dashboard: ${error instanceof Error ? error.message : String(error)}`);
  return 'the store could not answer this request; the details are in the log of tandem serve';
}

/** A path segment decoded; a malformed escape is bad input, not a crash. */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new InputError(`the path holds a malformed escape (${JSON.stringify(segment.slice(0, 60))})`);
  }
}

const EXPERIMENT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** An experiment id from a URL, checked before it reaches the store. */
export function experimentIdFrom(segment: string): string {
  if (!EXPERIMENT_ID.test(segment))
    throw new InputError(`experiment id must be letters, digits, '.', '_' or '-' (at most 200), got ${JSON.stringify(segment.slice(0, 60))}`);
  return segment;
}
