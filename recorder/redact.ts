/**
 * Secrets never reach storage: credential headers and configured header
 * names are replaced by a marker, and so are configured fields of JSON
 * bodies (dotted paths; a path through an array applies to every element).
 */

export const REDACTED = '[redacted]';

/** Always redacted, whatever the config says. */
export const ALWAYS_REDACTED_HEADERS = ['authorization', 'cookie', 'set-cookie', 'proxy-authorization'] as const;

export interface RedactionRules {
  /** Header names redacted in addition to ALWAYS_REDACTED_HEADERS. */
  readonly headers?: readonly string[];
  /** Dotted paths into JSON bodies, e.g. "user.email" or "items.token". */
  readonly bodyFields?: readonly string[];
}

export class Redactor {
  readonly #headers: ReadonlySet<string>;
  readonly #paths: readonly (readonly string[])[];

  constructor(rules: RedactionRules = {}) {
    this.#headers = new Set([...ALWAYS_REDACTED_HEADERS, ...(rules.headers ?? []).map((h) => h.toLowerCase())]);
    this.#paths = (rules.bodyFields ?? []).map((path) => path.split('.'));
  }

  /** Lower-cased headers, repeated values joined with ", ", secrets replaced. */
  headers(raw: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(raw)) {
      if (value === undefined) continue;
      const lower = name.toLowerCase();
      out[lower] = this.#headers.has(lower) ? REDACTED : Array.isArray(value) ? value.join(', ') : value;
    }
    return out;
  }

  /**
   * The body with configured JSON fields redacted. Bodies that are not JSON,
   * or when no fields are configured, are returned as they are.
   */
  body(body: Buffer, contentType: string | undefined): Buffer {
    if (this.#paths.length === 0 || body.length === 0 || !isJson(contentType)) return body;
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      return body;
    }
    let changed = false;
    for (const path of this.#paths) changed = redactPath(value, path, 0) || changed;
    return changed ? Buffer.from(JSON.stringify(value)) : body;
  }
}

function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

function redactPath(value: unknown, path: readonly string[], depth: number): boolean {
  if (Array.isArray(value)) return value.reduce<boolean>((changed, item) => redactPath(item, path, depth) || changed, false);
  if (value === null || typeof value !== 'object') return false;
  const key = path[depth]!;
  const record = value as Record<string, unknown>;
  if (!Object.hasOwn(record, key)) return false;
  if (depth === path.length - 1) {
    record[key] = REDACTED;
    return true;
  }
  return redactPath(record[key], path, depth + 1);
}
