/**
 * Corpus import from HAR 1.2 (browser devtools, proxies). Each entry's
 * request becomes a record, redacted like a sampled one; an entry that cannot
 * be used is skipped and reported by its number, and the rest are imported.
 */
import type { CorpusRecord } from '../core/index.js';
import { InputError } from '../core/index.js';
import { buildRecord } from './record-builder.js';
import type { Redactor } from './redact.js';
import { importProblem } from './import-checks.js';

/** An entry or line that was not imported, and why. */
export interface SkippedInput {
  /** e.g. "entry 3" or "line 120". */
  readonly where: string;
  readonly reason: string;
}

export interface ParsedImport {
  readonly records: CorpusRecord[];
  readonly skipped: SkippedInput[];
}

interface HarHeader {
  name?: unknown;
  value?: unknown;
}

export function parseHar(text: string, options: { tier: string; redactor: Redactor; maxBodyBytes: number }): ParsedImport {
  let har: unknown;
  try {
    har = JSON.parse(text);
  } catch (error) {
    throw new InputError(`not a HAR file: ${(error as Error).message}`);
  }
  const entries = (har as { log?: { entries?: unknown } } | null)?.log?.entries;
  if (!Array.isArray(entries)) throw new InputError('not a HAR file: log.entries is missing or not a list');
  const records: CorpusRecord[] = [];
  const skipped: SkippedInput[] = [];
  entries.forEach((entry: unknown, index) => {
    const where = `entry ${index}`;
    const request = (entry as { request?: Record<string, unknown> } | null)?.request;
    const started = Date.parse(String((entry as { startedDateTime?: unknown } | null)?.startedDateTime ?? ''));
    if (!request || typeof request !== 'object') return skipped.push({ where, reason: 'no request object' });
    if (typeof request.method !== 'string' || !/^[A-Za-z]+$/.test(request.method))
      return skipped.push({ where, reason: `request.method ${JSON.stringify(request.method)} is not an HTTP method` });
    let url: URL;
    try {
      url = new URL(String(request.url));
    } catch {
      return skipped.push({ where, reason: `request.url ${JSON.stringify(request.url)} is not an absolute URL` });
    }
    // Only HTTP requests replay: `javascript:alert(1)` would become the path `alert(1)`, `data:` a body as a path.
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return skipped.push({ where, reason: `request.url ${JSON.stringify(String(request.url).slice(0, 100))} is not an http(s) URL (${url.protocol})` });
    if (!Number.isFinite(started)) return skipped.push({ where, reason: 'startedDateTime is not a date' });
    if (!Array.isArray(request.headers)) return skipped.push({ where, reason: 'request.headers is not a list' });
    const headers: Record<string, string> = {};
    for (const header of request.headers as HarHeader[]) {
      if (typeof header?.name !== 'string' || typeof header.value !== 'string') return skipped.push({ where, reason: 'a header has no string name or value' });
      // HTTP/2 pseudo-headers (":authority") are not request headers.
      if (header.name.startsWith(':')) continue;
      const name = header.name.toLowerCase();
      headers[name] = headers[name] === undefined ? header.value : `${headers[name]}, ${header.value}`;
    }
    const postData = request.postData as { text?: unknown; encoding?: unknown; mimeType?: unknown } | undefined;
    let body = Buffer.alloc(0);
    if (postData !== undefined) {
      if (typeof postData.text !== 'string') return skipped.push({ where, reason: 'request.postData.text is not a string' });
      body = Buffer.from(postData.text, postData.encoding === 'base64' ? 'base64' : 'utf8');
      if (headers['content-type'] === undefined && typeof postData.mimeType === 'string' && postData.mimeType !== '')
        headers['content-type'] = postData.mimeType;
    }
    const truncated = body.length > options.maxBodyBytes;
    const problem = importProblem({ timeMs: started, method: request.method, headers });
    if (problem !== undefined) return skipped.push({ where, reason: problem });
    records.push(
      buildRecord(
        options.tier,
        options.redactor,
        { timeMs: started, method: request.method, url: `${url.pathname}${url.search}`, headers, body, truncated },
        { rate: 1, mode: 'import' },
      ),
    );
    return undefined;
  });
  return { records, skipped };
}
