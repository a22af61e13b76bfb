/**
 * What the harness needs to compare one replayed response, made as the
 * response ends (only when the workload compares responses). The body is
 * compared as the service meant it: a content encoding (gzip, deflate, br) is
 * undone first, bounded, so a compressed body is never compared as bytes. A
 * body up to the kept size is kept whole for a structural diff; a larger one
 * keeps its decoded hash (equal hashes are equal bodies, however large) and,
 * when it is JSON, a sketch: per generalized path (`items[].id`) a hash of its
 * values in order and the first value — a bounded structural diff. A body
 * that cannot be decoded says why, so the report can count it as skipped.
 */
import { hash } from 'node:crypto';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { sketchOf, type Json, type ResponseView } from '../core/index.js';

/** Decoded bodies beyond this are not compared (a decompression bomb costs nothing more). */
export const MAX_DECODED_BYTES = 32 * 1_048_576;
const REQUEST_BODY_BYTES = 1_024;

export interface ComparableResponse {
  readonly view: ResponseView;
  /** The decoded body when it fits the kept size. */
  readonly body?: Buffer;
}

function decoded(raw: Buffer, encoding: string): Buffer {
  const options = { maxOutputLength: MAX_DECODED_BYTES };
  if (encoding === 'gzip' || encoding === 'x-gzip') return gunzipSync(raw, options);
  if (encoding === 'deflate') return inflateSync(raw, options);
  if (encoding === 'br') return brotliDecompressSync(raw, options);
  throw Object.assign(new Error(`content-encoding ${JSON.stringify(encoding.slice(0, 40))} cannot be decoded`), { code: 'TANDEM_UNKNOWN_ENCODING' });
}

function skipReason(error: unknown, encoding: string): string {
  const code = (error as { code?: string }).code;
  if (code === 'TANDEM_UNKNOWN_ENCODING') return (error as Error).message;
  if (code === 'ERR_BUFFER_TOO_LARGE') return `larger than ${MAX_DECODED_BYTES / 1_048_576} MiB once decoded`;
  return `${encoding} body could not be decoded`;
}

const looksJson = (body: Buffer, contentType: string | undefined): boolean => {
  if (contentType !== undefined && /json/i.test(contentType)) return true;
  let i = 0;
  while (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09) i++;
  return body[i] === 0x7b || body[i] === 0x5b;
};

export function comparableResponse(
  raw: Buffer,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  request: { readonly method: string; readonly path: string; readonly body?: string },
  keepBytes: number,
  /** SHA-1 of `raw`, when the caller has it already: an unencoded body is not hashed twice on the replay path. */
  rawHash?: string,
): ComparableResponse {
  const header = (name: string): string | undefined => {
    const value = headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  const encoding = (header('content-encoding') ?? '').trim().toLowerCase();
  const contentType = header('content-type');
  const requestBody =
    request.body !== undefined && request.body !== '' ? Buffer.from(request.body, 'base64').subarray(0, REQUEST_BODY_BYTES).toString('utf8') : undefined;
  const base = {
    method: request.method,
    path: request.path,
    ...(requestBody !== undefined ? { requestBody } : {}),
    ...(contentType !== undefined ? { contentType } : {}),
    ...(encoding !== '' && encoding !== 'identity' ? { encoding } : {}),
  };
  let body: Buffer;
  try {
    body = encoding === '' || encoding === 'identity' || raw.length === 0 ? raw : decoded(raw, encoding);
  } catch (error) {
    return { view: { ...base, decodedBytes: 0, contentHash: '', skipped: skipReason(error, encoding) } };
  }
  const view = { ...base, decodedBytes: body.length, contentHash: body === raw && rawHash !== undefined ? rawHash : hash('sha1', body) };
  if (body.length <= keepBytes) return { view, body };
  if (!looksJson(body, contentType)) return { view };
  let parsed: Json;
  try {
    parsed = JSON.parse(body.toString('utf8')) as Json;
  } catch {
    return { view };
  }
  return { view: { ...view, sketch: sketchOf(parsed) } };
}
