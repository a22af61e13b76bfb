/**
 * What Tandem reads of gRPC on the wire, above HTTP/2 (which Node's `http2`
 * module speaks) and below protobuf (which protobufjs decodes): the content
 * type, the length-prefixed message stream of a body, statuses and
 * `grpc-timeout`. The message prefix (one flag byte, a 4-byte big-endian
 * length) is gRPC's own framing, not HTTP/2's nor protobuf's, and no
 * maintained package exposes it apart from a whole client, so it is read here.
 */
import { gunzipSync, inflateSync } from 'node:zlib';

/** gRPC's default receive limit, which Tandem takes as its own default. */
export const GRPC_DEFAULT_MAX_MESSAGE_BYTES = 4 * 1_048_576;

/** The canonical status codes (grpc/doc/statuscodes.md), by number. */
export const GRPC_STATUS_NAMES: readonly string[] = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];
export const GRPC_STATUS = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;

export const grpcStatusName = (code: number): string => GRPC_STATUS_NAMES[code] ?? `status ${code}`;

/** `application/grpc`, `application/grpc+proto`, `application/grpc; charset=…` (not `application/grpc-web`, a different framing). */
export function isGrpcContentType(value: string | string[] | undefined): boolean {
  const text = (Array.isArray(value) ? value[0] : value)?.toLowerCase();
  if (text === undefined || !text.startsWith('application/grpc')) return false;
  const rest = text.charAt('application/grpc'.length);
  return rest === '' || rest === '+' || rest === ';';
}

/** `/package.Service/Method` as its two names, or undefined when the path is not a gRPC method path. */
export function grpcMethodOf(path: string): { readonly service: string; readonly method: string } | undefined {
  const match = /^\/([A-Za-z_][\w.]{0,199})\/([A-Za-z_]\w{0,199})$/.exec(path);
  return match ? { service: match[1]!, method: match[2]! } : undefined;
}

export interface GrpcMessage {
  /** The flag said compressed (by the stream's `grpc-encoding`). */
  readonly compressed: boolean;
  readonly payload: Buffer;
}

export interface SplitMessages {
  readonly messages: readonly GrpcMessage[];
  /** Why the body is not a whole message stream: a prefix longer than what follows, a message over the limit, a bad flag. */
  readonly problem?: string;
}

/** A body as its length-prefixed messages; stops at the first problem, keeping the messages before it. */
export function splitMessages(body: Buffer, maxMessageBytes = GRPC_DEFAULT_MAX_MESSAGE_BYTES): SplitMessages {
  const messages: GrpcMessage[] = [];
  let offset = 0;
  while (offset < body.length) {
    if (body.length - offset < 5) return { messages, problem: `${body.length - offset} bytes after the last message are not a message prefix` };
    const flag = body[offset]!;
    if (flag > 1) return { messages, problem: `message ${messages.length + 1} has flag ${flag} (only 0 and 1 are defined)` };
    const length = body.readUInt32BE(offset + 1);
    if (length > maxMessageBytes) return { messages, problem: `message ${messages.length + 1} is ${length} bytes, over the ${maxMessageBytes}-byte limit` };
    if (offset + 5 + length > body.length)
      return { messages, problem: `message ${messages.length + 1}'s prefix says ${length} bytes, but ${body.length - offset - 5} follow` };
    messages.push({ compressed: flag === 1, payload: body.subarray(offset + 5, offset + 5 + length) });
    offset += 5 + length;
  }
  return { messages };
}

/** One message with its prefix. */
export function frameMessage(payload: Uint8Array, compressed = false): Buffer {
  const framed = Buffer.allocUnsafe(5 + payload.length);
  framed[0] = compressed ? 1 : 0;
  framed.writeUInt32BE(payload.length, 1);
  framed.set(payload, 5);
  return framed;
}

/** A compressed message's payload, uncompressed by the stream's `grpc-encoding`, bounded; throws with a reason otherwise. */
export function uncompressedPayload(message: GrpcMessage, encoding: string | undefined, maxMessageBytes = GRPC_DEFAULT_MAX_MESSAGE_BYTES): Buffer {
  if (!message.compressed) return message.payload;
  const name = (encoding ?? '').trim().toLowerCase();
  const options = { maxOutputLength: Math.max(1, maxMessageBytes) };
  if (name === 'gzip') return gunzipSync(message.payload, options);
  if (name === 'deflate') return inflateSync(message.payload, options);
  if (name === '' || name === 'identity') throw new Error('a message is flagged compressed, but the stream names no grpc-encoding');
  throw new Error(`grpc-encoding ${JSON.stringify(name.slice(0, 40))} is not one Tandem can undo (gzip, deflate)`);
}

export interface DecodedMessages {
  /** The payloads read, compression undone, in order. */
  readonly payloads: readonly Buffer[];
  /** Messages in the stream up to its first problem (more than `payloads` when `maxMessages` stopped the reading). */
  readonly count: number;
  /** Why not every message is in `payloads`: a framing problem, a message that would not decompress, or the count limit. */
  readonly problem?: string;
}

/**
 * A message stream read whole, as the recorder and the replayer both read answers: split, each message's compression
 * undone within `maxMessageBytes`, at most `maxMessages` of them; the messages before a problem are kept.
 */
export function decodedMessages(
  body: Buffer,
  encoding: string | undefined,
  limits: { readonly maxMessageBytes?: number; readonly maxMessages?: number } = {},
): DecodedMessages {
  const maxMessageBytes = limits.maxMessageBytes ?? GRPC_DEFAULT_MAX_MESSAGE_BYTES;
  const split = splitMessages(body, maxMessageBytes);
  const payloads: Buffer[] = [];
  for (const message of split.messages) {
    if (limits.maxMessages !== undefined && payloads.length === limits.maxMessages)
      return { payloads, count: split.messages.length, problem: `more than ${limits.maxMessages} messages` };
    try {
      payloads.push(uncompressedPayload(message, encoding, maxMessageBytes));
    } catch (error) {
      return { payloads, count: split.messages.length, problem: (error as Error).message };
    }
  }
  return { payloads, count: split.messages.length, ...(split.problem !== undefined ? { problem: split.problem } : {}) };
}

const TIMEOUT_UNITS: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 0.001, n: 0.000_001 };

/** `grpc-timeout` (at most 8 digits and a unit, per the protocol) in ms, or undefined when absent or malformed. */
export function parseGrpcTimeout(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  const match = text === undefined ? null : /^(\d{1,8})([HMSmun])$/.exec(text.trim());
  return match ? Number(match[1]) * TIMEOUT_UNITS[match[2]!]! : undefined;
}

type Fields = Readonly<Record<string, unknown>>;

/**
 * Where a call's status is: its trailers, or the headers of a trailers-only answer; with the status as a
 * number (-1 when the call ended without one) and its message decoded.
 */
export function grpcEndingOf<T extends Fields>(
  headers: T | undefined,
  trailers: T | undefined,
): { readonly ending: T | undefined; readonly status: number; readonly message: string } {
  const ending = trailers ?? (headers?.['grpc-status'] !== undefined ? headers : undefined);
  const text = ending?.['grpc-status'];
  return {
    ending,
    status: typeof text === 'string' && /^\d{1,3}$/.test(text) ? Number(text) : -1,
    message: decodeGrpcMessage(ending?.['grpc-message'] as string | undefined),
  };
}

/** `grpc-message` is percent-encoded on the wire (the protocol's own escaping). */
export function decodeGrpcMessage(value: string | string[] | undefined): string {
  const text = (Array.isArray(value) ? value[0] : value) ?? '';
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export function encodeGrpcMessage(text: string): string {
  return text.replace(/[^\x20-\x24\x26-\x7e]/gu, (c) => {
    try {
      return encodeURIComponent(c);
    } catch {
      return '%EF%BF%BD'; // a lone surrogate: U+FFFD, as the spec's decoders do
    }
  });
}
