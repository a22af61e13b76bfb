/**
 * Content encodings and UTF-16 around redaction: a compressed body is
 * decompressed (bounded, so a zip bomb cannot exhaust memory), redacted and
 * compressed again the same way; a UTF-16 body is redacted as UTF-8 and
 * written back in its own byte order. A body that is not changed is stored as
 * the original bytes, never re-encoded.
 */
import { brotliCompressSync, brotliDecompressSync, deflateSync, gzipSync, inflateSync, gunzipSync } from 'node:zlib';

export type ContentEncoding = 'gzip' | 'deflate' | 'br';

export class UnsupportedEncodingError extends Error {}

/** The body's content encoding: from the header, or gzip's magic bytes when the header is missing. */
export function contentEncodingOf(header: string | undefined, body: Buffer): ContentEncoding | 'identity' {
  const value = (header ?? '').trim().toLowerCase();
  if (value === '' || value === 'identity') return body[0] === 0x1f && body[1] === 0x8b && body[2] === 0x08 ? 'gzip' : 'identity';
  if (value === 'gzip' || value === 'x-gzip') return 'gzip';
  if (value === 'deflate') return 'deflate';
  if (value === 'br') return 'br';
  throw new UnsupportedEncodingError(`content-encoding "${value.slice(0, 40)}" cannot be decoded for redaction`);
}

export function decode(body: Buffer, encoding: ContentEncoding, maxBytes: number): Buffer {
  const options = { maxOutputLength: Math.max(1, maxBytes) };
  if (encoding === 'gzip') return gunzipSync(body, options);
  if (encoding === 'deflate') return inflateSync(body, options);
  return brotliDecompressSync(body, options);
}

export function encode(body: Buffer, encoding: ContentEncoding): Buffer {
  if (encoding === 'gzip') return gzipSync(body);
  if (encoding === 'deflate') return deflateSync(body);
  return brotliCompressSync(body);
}

export type Utf16 = { readonly endian: 'le' | 'be'; readonly bom: boolean };

/** UTF-16 by byte-order mark, by the declared charset, or by the zero byte beside a JSON body's opening bracket (RFC 4627 §3). */
export function detectUtf16(body: Buffer, contentType: string | undefined): Utf16 | undefined {
  if (body[0] === 0xff && body[1] === 0xfe) return { endian: 'le', bom: true };
  if (body[0] === 0xfe && body[1] === 0xff) return { endian: 'be', bom: true };
  if (opensJson(body[0]) && body[1] === 0) return { endian: 'le', bom: false };
  if (body[0] === 0 && opensJson(body[1])) return { endian: 'be', bom: false };
  // The regular expression only for a type that could name UTF-16: this runs on every recorded body.
  const charset = contentType !== undefined && contentType.includes('16') ? /charset="?utf-16(le|be)?/i.exec(contentType) : null;
  if (charset) return { endian: charset[1]?.toLowerCase() === 'be' ? 'be' : 'le', bom: false };
  return undefined;
}

const opensJson = (c: number | undefined): boolean => c === 0x7b || c === 0x5b;

const swapped = (bytes: Buffer): Buffer => Buffer.from(bytes).swap16();

export function utf16ToUtf8(body: Buffer, utf16: Utf16): Buffer {
  let units: Buffer = body.subarray(utf16.bom ? 2 : 0);
  if (units.length % 2 !== 0) throw new UnsupportedEncodingError('a UTF-16 body has an odd number of bytes');
  if (utf16.endian === 'be') units = swapped(units);
  return Buffer.from(units.toString('utf16le'), 'utf8');
}

export function utf8ToUtf16(body: Buffer, utf16: Utf16): Buffer {
  let units: Buffer = Buffer.from(body.toString('utf8'), 'utf16le');
  if (utf16.endian === 'be') units = swapped(units);
  return utf16.bom ? Buffer.concat([Buffer.from(utf16.endian === 'le' ? [0xff, 0xfe] : [0xfe, 0xff]), units]) : units;
}
