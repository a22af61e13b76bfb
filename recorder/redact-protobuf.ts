/**
 * Secrets in protobuf messages, found by field name with the service's descriptors: the value of every field whose
 * name is a secret name (as declared, or its snake_case: protobufjs camel-cases names read from a descriptor set)
 * is replaced on the wire, at any depth and inside map entries keyed by a secret name. Like the JSON redaction
 * (redact-json.ts) only those values' bytes change: every other field, unknown ones included, keeps its bytes and
 * order, and each enclosing message's length is written again. A string or bytes value becomes "[redacted]", a
 * number 0, a message or a packed list empty.
 */
import protobuf from 'protobufjs';

const REDACTED_BYTES = Buffer.from('[redacted]');
const EMPTY = Buffer.alloc(0);
/** Deeper nesting than any schema needs, and a bound on the recursion a hostile message can ask for. */
const MAX_DEPTH = 100;

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH = 2;
const WIRE_FIXED32 = 5;

const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

type IsSecretName = (name: string) => boolean;

const isSecretField = (field: protobuf.Field, isSecretName: IsSecretName): boolean => isSecretName(field.name) || isSecretName(snakeCase(field.name));

/** A zero of the wire type's own width: the message keeps its shape. */
function zeroOf(wire: number): Buffer {
  if (wire === WIRE_FIXED64) return Buffer.alloc(8);
  if (wire === WIRE_FIXED32) return Buffer.alloc(4);
  return Buffer.from([0]);
}

const lengthPrefix = (length: number): Uint8Array => protobuf.Writer.create().uint32(length).finish();

/** What a length-delimited value of this protobuf type becomes when it is secret. */
function secretValueOf(valueType: string): Buffer {
  return valueType === 'string' || valueType === 'bytes' ? REDACTED_BYTES : EMPTY;
}

/**
 * The message with its secrets replaced, or undefined when it holds none. Throws when the bytes are not a protobuf
 * message (a truncated field, an invalid wire type): the caller withholds it, as it does unreadable JSON.
 */
export function redactProtobuf(bytes: Uint8Array, type: protobuf.Type, isSecretName: IsSecretName): Buffer | undefined {
  return redactMessage(bytes, type, isSecretName, 0);
}

function redactMessage(bytes: Uint8Array, type: protobuf.Type, isSecretName: IsSecretName, depth: number): Buffer | undefined {
  if (depth > MAX_DEPTH) throw new Error(`messages nested deeper than ${MAX_DEPTH}`);
  const reader = protobuf.Reader.create(bytes);
  const parts: Uint8Array[] = [];
  let copiedUpTo = 0;
  const replace = (from: number, to: number, value: Uint8Array, prefixed: boolean): void => {
    parts.push(bytes.subarray(copiedUpTo, from));
    if (prefixed) parts.push(lengthPrefix(value.length));
    parts.push(value);
    copiedUpTo = to;
  };
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const id = tag >>> 3;
    const wire = tag & 7;
    if (id === 0) throw new Error('a field numbered 0');
    const field = type.fieldsById[id];
    const valueStart = reader.pos;
    if (wire !== WIRE_LENGTH) {
      reader.skipType(wire);
      if (field && isSecretField(field, isSecretName) && (wire === WIRE_VARINT || wire === WIRE_FIXED64 || wire === WIRE_FIXED32))
        replace(valueStart, reader.pos, zeroOf(wire), false);
      continue;
    }
    const length = reader.uint32();
    const from = reader.pos;
    reader.skip(length);
    if (!field) continue;
    field.resolve();
    const value = bytes.subarray(from, reader.pos);
    let replacement: Uint8Array | undefined;
    if (isSecretField(field, isSecretName)) replacement = secretValueOf(field.type);
    else if (field instanceof protobuf.MapField) replacement = redactMapEntry(value, field, isSecretName, depth);
    else if (field.resolvedType instanceof protobuf.Type) replacement = redactMessage(value, field.resolvedType, isSecretName, depth + 1);
    if (replacement !== undefined) replace(valueStart, reader.pos, replacement, true);
  }
  if (parts.length === 0) return undefined;
  parts.push(bytes.subarray(copiedUpTo));
  return Buffer.concat(parts);
}

/**
 * One entry of a map field (key = 1, value = 2): its value replaced when its string key is a secret name, or
 * redacted within when it is a message.
 */
function redactMapEntry(entry: Uint8Array, field: protobuf.MapField, isSecretName: IsSecretName, depth: number): Buffer | undefined {
  const reader = protobuf.Reader.create(entry);
  let secretKey = false;
  let valueAt: { valueStart: number; end: number; wire: number } | undefined;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const id = tag >>> 3;
    const wire = tag & 7;
    const valueStart = reader.pos;
    if (id === 1 && wire === WIRE_LENGTH && field.keyType === 'string') {
      secretKey = isSecretName(reader.string());
      continue;
    }
    reader.skipType(wire);
    if (id === 2) valueAt = { valueStart, end: reader.pos, wire };
  }
  if (!valueAt) return undefined;
  const { valueStart, end, wire } = valueAt;
  let replacement: Uint8Array | undefined;
  const prefixed = wire === WIRE_LENGTH;
  if (secretKey) {
    replacement = wire === WIRE_LENGTH ? secretValueOf(field.type) : zeroOf(wire);
  } else if (wire === WIRE_LENGTH && field.resolvedType instanceof protobuf.Type) {
    const inner = protobuf.Reader.create(entry.subarray(valueStart, end));
    const length = inner.uint32();
    replacement = redactMessage(entry.subarray(valueStart + inner.pos, valueStart + inner.pos + length), field.resolvedType, isSecretName, depth + 1);
  }
  if (replacement === undefined) return undefined;
  return Buffer.concat([entry.subarray(0, valueStart), prefixed ? lengthPrefix(replacement.length) : EMPTY, replacement, entry.subarray(end)]);
}
