/**
 * What Tandem's small JSON ingest endpoints share (config reads, lattice
 * load-factors): a JSON reply, a constant-time bearer-token check, and a body
 * read with a size limit that drains an oversized body instead of resetting
 * the connection, so the client reads the 413.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export function replyJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** A check of `Authorization: Bearer <token>`; always true when no token is configured. */
export function bearerCheck(token: string | undefined): (req: IncomingMessage) => boolean {
  if (!token) return () => true;
  const expected = Buffer.from(`Bearer ${token}`);
  return (req) => {
    const given = Buffer.from(req.headers.authorization ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
}

/** The request body as text, or undefined when it exceeded `maxBytes` (the rest is drained and discarded). */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    req.once('end', () => resolve(size > maxBytes ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}
