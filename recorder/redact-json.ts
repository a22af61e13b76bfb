/**
 * Finds the byte ranges of secret values in a JSON body without parsing it
 * into objects and without recursion. Redaction replaces only those ranges, so
 * every other byte — numbers beyond double precision, `1e999`, `1.10`,
 * whitespace, key order, a BOM — reaches the corpus exactly as production
 * sent it, and a body nested 20,000 deep costs a stack of 20,000 array slots,
 * not 20,000 call frames. The scanner is strict (RFC 8259): anything it cannot
 * read throws JsonSyntaxError, and the caller withholds the body.
 * Several whitespace-separated documents (NDJSON) are read one after another.
 */

export class JsonSyntaxError extends Error {
  constructor(
    readonly offset: number,
    what: string,
  ) {
    super(`${what} at byte ${offset}`);
  }
}

/** What is secret: a field name anywhere, or a path of object keys from the root (arrays are transparent). */
export interface JsonSecrets {
  isSecretName(name: string): boolean;
  /** Paths by length, so a key deep in a body is compared only against paths as long as its own. */
  readonly pathsByLength: ReadonlyMap<number, readonly (readonly string[])[]>;
}

const enum Byte {
  Quote = 0x22,
  Backslash = 0x5c,
  Comma = 0x2c,
  Colon = 0x3a,
  OpenBrace = 0x7b,
  CloseBrace = 0x7d,
  OpenBracket = 0x5b,
  CloseBracket = 0x5d,
  Minus = 0x2d,
  Zero = 0x30,
  Nine = 0x39,
}

const isWhitespace = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDigit = (c: number | undefined): boolean => c !== undefined && c >= Byte.Zero && c <= Byte.Nine;
const isHex = (c: number | undefined): boolean => c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
const ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const LITERALS: readonly Buffer[] = [Buffer.from('true'), Buffer.from('false'), Buffer.from('null')];

/**
 * Byte ranges [start, end) of secret values, in order, never nested. `embedded`, when given, receives the
 * ranges of string values (quotes included) outside those that open like JSON (`"{…"`, `"[…"`): a client
 * that sends JSON inside a string field sends its secrets there too, and the caller redacts inside them.
 */
export function findSecretValues(bytes: Buffer, secrets: JsonSecrets, start = 0, embedded?: [number, number][]): [number, number][] {
  const scanner = new Scanner(bytes, start);
  return scanner.run(secrets, embedded);
}

class Scanner {
  #i: number;
  constructor(
    readonly bytes: Buffer,
    start: number,
  ) {
    this.#i = start;
  }

  run(secrets: JsonSecrets, embedded?: [number, number][]): [number, number][] {
    const ranges: [number, number][] = [];
    const b = this.bytes;
    // One entry per open container: true for an object. `keys` holds the current key of each open object.
    const containers: boolean[] = [];
    const keys: string[] = [];
    let redactFrom = -1;
    let redactDepth = -1;
    let pendingSecret = false;
    let state: 'value' | 'key' | 'after' = 'value';
    for (;;) {
      if (state === 'value') {
        this.#skipWhitespace();
        if (this.#i >= b.length) {
          if (containers.length === 0 && redactFrom < 0) return ranges;
          throw new JsonSyntaxError(this.#i, 'unexpected end of JSON');
        }
        if (pendingSecret && redactFrom < 0) {
          redactFrom = this.#i;
          redactDepth = containers.length;
        }
        pendingSecret = false;
        const c = b[this.#i];
        if (c === Byte.OpenBrace || c === Byte.OpenBracket) {
          this.#i++;
          containers.push(c === Byte.OpenBrace);
          if (c === Byte.OpenBrace) keys.push('');
          this.#skipWhitespace();
          if (b[this.#i] === (c === Byte.OpenBrace ? Byte.CloseBrace : Byte.CloseBracket)) {
            this.#i++;
            containers.pop();
            if (c === Byte.OpenBrace) keys.pop();
            state = 'after';
          } else {
            state = c === Byte.OpenBrace ? 'key' : 'value';
          }
        } else {
          const at = this.#i;
          this.#scalar();
          if (embedded && redactFrom < 0 && c === Byte.Quote && (b[at + 1] === Byte.OpenBrace || b[at + 1] === Byte.OpenBracket)) embedded.push([at, this.#i]);
          state = 'after';
        }
      } else if (state === 'key') {
        this.#skipWhitespace();
        if (b[this.#i] !== Byte.Quote) throw new JsonSyntaxError(this.#i, 'expected a quoted key');
        const keyStart = this.#i;
        this.#string();
        // Escapes are rare in keys: decode through JSON.parse only when there is one.
        const raw = b.toString('utf8', keyStart + 1, this.#i - 1);
        const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        this.#skipWhitespace();
        if (b[this.#i] !== Byte.Colon) throw new JsonSyntaxError(this.#i, 'expected ":" after a key');
        this.#i++;
        keys[keys.length - 1] = key;
        if (redactFrom < 0) pendingSecret = secrets.isSecretName(key) || matchesPath(keys, secrets.pathsByLength);
        state = 'value';
      } else {
        if (redactFrom >= 0 && containers.length === redactDepth) {
          ranges.push([redactFrom, this.#i]);
          redactFrom = -1;
        }
        if (containers.length === 0) {
          state = 'value';
          continue;
        }
        this.#skipWhitespace();
        const c = b[this.#i];
        const inObject = containers[containers.length - 1]!;
        if (c === Byte.Comma) {
          this.#i++;
          state = inObject ? 'key' : 'value';
        } else if (c === (inObject ? Byte.CloseBrace : Byte.CloseBracket)) {
          this.#i++;
          containers.pop();
          if (inObject) keys.pop();
        } else {
          throw new JsonSyntaxError(this.#i, inObject ? 'expected "," or "}"' : 'expected "," or "]"');
        }
      }
    }
  }

  #skipWhitespace(): void {
    while (isWhitespace(this.bytes[this.#i])) this.#i++;
  }

  #scalar(): void {
    const b = this.bytes;
    const c = b[this.#i];
    if (c === Byte.Quote) return this.#string();
    if (c === Byte.Minus || isDigit(c)) return this.#number();
    for (const literal of LITERALS) {
      if (b[this.#i] === literal[0] && b.subarray(this.#i, this.#i + literal.length).equals(literal)) {
        this.#i += literal.length;
        return;
      }
    }
    throw new JsonSyntaxError(this.#i, 'unexpected byte');
  }

  #string(): void {
    const b = this.bytes;
    this.#i++;
    for (;;) {
      const c = b[this.#i];
      if (c === undefined) throw new JsonSyntaxError(this.#i, 'unterminated string');
      if (c === Byte.Quote) {
        this.#i++;
        return;
      }
      if (c < 0x20) throw new JsonSyntaxError(this.#i, 'control character in a string');
      if (c === Byte.Backslash) {
        const e = b[this.#i + 1];
        if (e === 0x75) {
          for (let k = 2; k < 6; k++) if (!isHex(b[this.#i + k])) throw new JsonSyntaxError(this.#i, 'bad \\u escape');
          this.#i += 6;
        } else if (e !== undefined && ESCAPES.has(e)) {
          this.#i += 2;
        } else {
          throw new JsonSyntaxError(this.#i, 'bad escape');
        }
      } else {
        this.#i++;
      }
    }
  }

  #number(): void {
    const b = this.bytes;
    const start = this.#i;
    if (b[this.#i] === Byte.Minus) this.#i++;
    if (b[this.#i] === Byte.Zero) this.#i++;
    else if (isDigit(b[this.#i])) while (isDigit(b[this.#i])) this.#i++;
    else throw new JsonSyntaxError(start, 'bad number');
    if (b[this.#i] === 0x2e) {
      this.#i++;
      if (!isDigit(b[this.#i])) throw new JsonSyntaxError(start, 'bad number');
      while (isDigit(b[this.#i])) this.#i++;
    }
    if (b[this.#i] === 0x65 || b[this.#i] === 0x45) {
      this.#i++;
      if (b[this.#i] === 0x2b || b[this.#i] === Byte.Minus) this.#i++;
      if (!isDigit(b[this.#i])) throw new JsonSyntaxError(start, 'bad number');
      while (isDigit(b[this.#i])) this.#i++;
    }
  }
}

function matchesPath(keys: readonly string[], pathsByLength: ReadonlyMap<number, readonly (readonly string[])[]>): boolean {
  const candidates = pathsByLength.get(keys.length);
  if (!candidates) return false;
  return candidates.some((path) => path.every((segment, i) => segment === keys[i]));
}

/** `bytes` with each range [from, to) replaced by its replacement; ranges in order, not overlapping. */
export function replaceRanges(bytes: Buffer, ranges: readonly (readonly [number, number, Buffer])[]): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (const [from, to, replacement] of ranges) {
    parts.push(bytes.subarray(at, from), replacement);
    at = to;
  }
  parts.push(bytes.subarray(at));
  return Buffer.concat(parts);
}
