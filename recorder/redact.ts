/**
 * Secrets never reach storage. Secret names (DEFAULT_SECRET_NAMES unless
 * configured, plus per-tier additions) are redacted by name in headers, query
 * parameters, form and multipart fields and JSON fields, whatever the declared
 * content type; configured dotted paths redact JSON fields from the root.
 * Redaction replaces only the secret values' bytes (see redact-json.ts), so a
 * replay sends production's body byte for byte elsewhere.
 *
 * A body that looks structured (JSON by type or first byte, a form, multipart,
 * a content encoding) but cannot be read is *withheld*: stored empty, marked,
 * counted — never stored verbatim, because its secrets could not be found.
 */
import { JsonSyntaxError, findSecretValues, replaceRanges, type JsonSecrets } from './redact-json.js';
import { looksLikeForm, redactFormText, redactUrl } from './redact-form.js';
import { MultipartSyntaxError, boundaryOf, multipartParts } from './redact-multipart.js';
import { UnsupportedEncodingError, contentEncodingOf, decode, detectUtf16, encode, utf16ToUtf8, utf8ToUtf16 } from './body-encoding.js';
import { DEFAULT_SECRET_NAMES } from '../core/index.js';
import { SecretNames } from './redact-names.js';
import { redactProtobuf } from './redact-protobuf.js';
import type { GrpcSchema } from '../net/index.js';

export { ALWAYS_REDACTED_HEADERS } from './redact-names.js';

export const REDACTED = '[redacted]';
const JSON_REDACTED = Buffer.from(JSON.stringify(REDACTED));

export interface RedactionRules {
  /** Names redacted in headers, query, form and JSON fields. @default DEFAULT_SECRET_NAMES */
  readonly names?: readonly string[];
  /** Header names redacted in addition to ALWAYS_REDACTED_HEADERS and the secret names. */
  readonly headers?: readonly string[];
  /** Dotted paths into JSON bodies, from the root, e.g. "user.email" or "items.token". */
  readonly bodyFields?: readonly string[];
}

/** The rules for one tier: the global rules plus the tier's additions. */
export function rulesForTier(rules: RedactionRules & { readonly tiers?: Readonly<Record<string, RedactionRules>> }, tier: string): RedactionRules {
  const extra = rules.tiers && Object.hasOwn(rules.tiers, tier) ? rules.tiers[tier]! : {};
  return {
    names: [...(rules.names ?? DEFAULT_SECRET_NAMES), ...(extra.names ?? [])],
    headers: [...(rules.headers ?? []), ...(extra.headers ?? [])],
    bodyFields: [...(rules.bodyFields ?? []), ...(extra.bodyFields ?? [])],
  };
}

/** Which message of a gRPC call a payload is: with descriptors, its type gives its fields' names. */
export interface GrpcMessageOf {
  readonly service: string;
  readonly method: string;
  readonly direction: 'request' | 'response';
}

/** A redacted body, or the reason it could not be redacted and must not be stored. */
export type RedactedBody = { readonly body: Buffer; readonly withheld?: undefined } | { readonly body?: undefined; readonly withheld: string };

export class Redactor {
  readonly #names: SecretNames;
  readonly #json: JsonSecrets;
  readonly #maxDecodedBytes: number;
  readonly #grpcSchema: GrpcSchema | undefined;
  /** Made once: a closure per call costs an allocation on every recorded request. */
  readonly #isSecretName: (name: string) => boolean;

  constructor(rules: RedactionRules = {}, options: { maxDecodedBytes?: number; grpcSchema?: GrpcSchema } = {}) {
    this.#grpcSchema = options.grpcSchema;
    this.#names = new SecretNames(rules.names ?? DEFAULT_SECRET_NAMES, rules.headers ?? []);
    const pathsByLength = new Map<number, string[][]>();
    for (const path of (rules.bodyFields ?? []).map((p) => p.split('.'))) pathsByLength.set(path.length, [...(pathsByLength.get(path.length) ?? []), path]);
    const names = this.#names;
    this.#isSecretName = (name) => names.isSecretName(name);
    this.#json = { isSecretName: this.#isSecretName, pathsByLength };
    this.#maxDecodedBytes = options.maxDecodedBytes ?? 8 * 1_048_576;
  }

  /** Lower-cased headers, repeated values joined with ", ", secrets replaced. */
  headers(raw: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name in raw) {
      if (!Object.hasOwn(raw, name)) continue;
      const value = raw[name];
      if (value === undefined) continue;
      const lower = name.toLowerCase();
      out[lower] = this.#names.isSecretHeader(lower) ? REDACTED : Array.isArray(value) ? value.join(', ') : value;
    }
    return out;
  }

  /** A request target with secret query parameters' values replaced. */
  url(url: string): string {
    return redactUrl(url, this.#isSecretName);
  }

  /** The body with every secret value replaced, the original bytes when there was none, or withheld. */
  body(body: Buffer, headers: Readonly<Record<string, string>>): RedactedBody {
    if (body.length === 0) return { body };
    try {
      const encoding = contentEncodingOf(headers['content-encoding'], body);
      const plain = encoding === 'identity' ? body : decode(body, encoding, this.#maxDecodedBytes);
      const redacted = this.#plain(plain, headers['content-type']);
      if (redacted === undefined) return { body };
      return { body: encoding === 'identity' ? redacted : encode(redacted, encoding) };
    } catch (error) {
      return { withheld: withheldReason(error) };
    }
  }

  /**
   * One gRPC message's payload (compression undone) with its secrets replaced — the same names as everywhere else —
   * where it is JSON (`application/grpc+json`, or a payload that opens an object or array), or protobuf of a method
   * the recorder has descriptors for (`recorder.grpc.descriptors`; redact-protobuf.ts). Other protobuf is returned
   * as it is: without descriptors no field has a name. Withheld when it cannot be read as what it is taken for.
   */
  grpcMessage(payload: Buffer, contentType: string | undefined, of?: GrpcMessageOf): RedactedBody {
    const subtype = mediaTypeOf(contentType).slice('application/grpc'.length);
    if (subtype === '+json' || opensJson(payload)) {
      try {
        return { body: this.#jsonBody(payload) ?? payload };
      } catch (error) {
        return { withheld: withheldReason(error) };
      }
    }
    const type =
      of &&
      this.#grpcSchema &&
      (of.direction === 'request' ? this.#grpcSchema.requestType(of.service, of.method) : this.#grpcSchema.responseType(of.service, of.method));
    if (!type) return { body: payload };
    try {
      return { body: redactProtobuf(payload, type, this.#isSecretName) ?? payload };
    } catch (error) {
      return { withheld: `not a ${type.fullName.replace(/^\./, '')} message (${(error as Error).message.slice(0, 120)})` };
    }
  }

  /** The redacted bytes of an unencoded body, or undefined when nothing in it is secret. */
  #plain(body: Buffer, contentType: string | undefined): Buffer | undefined {
    const mediaType = mediaTypeOf(contentType);
    const utf16 = detectUtf16(body, contentType);
    if (utf16) {
      const redacted = this.#plain(utf16ToUtf8(body, utf16), mediaType);
      return redacted && utf8ToUtf16(redacted, utf16);
    }
    if (mediaType.startsWith('multipart/')) return this.#multipart(body, contentType ?? '');
    if (isJsonType(mediaType) || opensJson(body)) return this.#jsonBody(body);
    if (mediaType === 'application/x-www-form-urlencoded' || (mayBeForm(mediaType) && looksLikeForm(body))) {
      const text = redactFormText(body.toString('latin1'), this.#isSecretName);
      return text === undefined ? undefined : Buffer.from(text, 'latin1');
    }
    return undefined;
  }

  #jsonBody(body: Buffer): Buffer | undefined {
    const start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
    const embedded: [number, number][] = [];
    const ranges: [number, number, Buffer][] = findSecretValues(body, this.#json, start, embedded).map(([from, to]) => [from, to, JSON_REDACTED]);
    for (const [from, to] of embedded) {
      const redacted = this.#embeddedJson(body.subarray(from, to));
      if (redacted) ranges.push([from, to, redacted]);
    }
    if (ranges.length === 0) return undefined;
    return replaceRanges(body, embedded.length === 0 ? ranges : ranges.sort((a, b) => a[0] - b[0]));
  }

  /**
   * A JSON string token whose text is itself JSON (`"{\"token\":\"S\"}"`): its secrets redacted and the
   * string encoded again, or undefined when it holds none or is not JSON after all (then it is just text).
   * Re-encoding may spell escapes differently; it happens only where a secret was removed.
   */
  #embeddedJson(token: Buffer): Buffer | undefined {
    const text = JSON.parse(token.toString('utf8')) as string;
    let redacted: Buffer | undefined;
    try {
      redacted = this.#jsonBody(Buffer.from(text, 'utf8'));
    } catch (error) {
      if (error instanceof JsonSyntaxError) return undefined;
      throw error;
    }
    return redacted && Buffer.from(JSON.stringify(redacted.toString('utf8')), 'utf8');
  }

  #multipart(body: Buffer, contentType: string): Buffer | undefined {
    const boundary = boundaryOf(contentType);
    if (boundary === undefined) throw new MultipartSyntaxError('multipart body without a boundary');
    const ranges: [number, number, Buffer][] = [];
    for (const part of multipartParts(body, boundary)) {
      if (part.name !== undefined && this.#names.isSecretName(part.name)) {
        ranges.push([part.contentStart, part.contentEnd, Buffer.from(REDACTED)]);
      } else {
        // Every part is read like a body of its own type (JSON found by its first byte too).
        const redacted = this.#plain(body.subarray(part.contentStart, part.contentEnd), part.contentType ?? '');
        if (redacted) ranges.push([part.contentStart, part.contentEnd, redacted]);
      }
    }
    return ranges.length === 0 ? undefined : replaceRanges(body, ranges);
  }
}

function mediaTypeOf(contentType: string | undefined): string {
  if (contentType === undefined) return '';
  const semicolon = contentType.indexOf(';');
  return (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

const isJsonType = (mediaType: string): boolean => mediaType === 'application/json' || mediaType.endsWith('+json') || mediaType === 'application/x-ndjson';
const mayBeForm = (mediaType: string): boolean => mediaType === '' || mediaType === 'text/plain' || mediaType === 'application/octet-stream';

/** The first byte that is not whitespace (after a UTF-8 BOM) opens an object or array: treated as JSON whatever the type says. */
function opensJson(body: Buffer): boolean {
  let i = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  while (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09) i++;
  return body[i] === 0x7b || body[i] === 0x5b;
}

function withheldReason(error: unknown): string {
  if (error instanceof JsonSyntaxError) return `not valid JSON (${error.message})`;
  if (error instanceof MultipartSyntaxError) return `not valid multipart (${error.message})`;
  if (error instanceof UnsupportedEncodingError) return error.message;
  const code = (error as { code?: string }).code;
  if (code === 'ERR_BUFFER_TOO_LARGE') return 'larger than the decompression limit once decoded';
  if (code?.startsWith('Z_') === true || code === 'ERR_ZLIB_INITIALIZATION_FAILED') return 'its content encoding could not be decoded';
  return `could not be redacted (${error instanceof Error ? error.message.slice(0, 100) : 'unknown error'})`;
}
