/**
 * Which names are secret. One list applies by name to headers, query
 * parameters, form and multipart fields and JSON fields, whatever the declared
 * content type: a token is a token wherever a client put it. Names compare
 * case-insensitively with `-` and `_` treated alike (`Api-Key` = `api_key`).
 */

/** Headers that carry credentials whatever the config says. */
export const ALWAYS_REDACTED_HEADERS = ['authorization', 'cookie', 'set-cookie', 'proxy-authorization'] as const;

export function normalizeName(name: string): string {
  const lower = name.toLowerCase();
  return lower.includes('-') ? lower.replaceAll('-', '_') : lower;
}

/** Header names seen per recorder are few and repeat on every request: their verdicts are remembered, up to this many. */
const HEADER_CACHE_LIMIT = 4_096;

export class SecretNames {
  readonly #names: ReadonlySet<string>;
  readonly #headers: ReadonlySet<string>;
  readonly #headerVerdicts = new Map<string, boolean>();

  constructor(names: readonly string[], headers: readonly string[]) {
    this.#names = new Set(names.map(normalizeName));
    this.#headers = new Set([...ALWAYS_REDACTED_HEADERS, ...headers].map(normalizeName));
  }

  /** A query parameter, form field or JSON field. */
  isSecretName(name: string): boolean {
    return this.#names.has(normalizeName(name));
  }

  /** A header: a listed header, a secret name, or a secret name behind a prefix (`x-api-key`, `x-auth-token`). */
  isSecretHeader(name: string): boolean {
    const known = this.#headerVerdicts.get(name);
    if (known !== undefined) return known;
    const secret = this.#judgeHeader(name);
    if (this.#headerVerdicts.size < HEADER_CACHE_LIMIT) this.#headerVerdicts.set(name, secret);
    return secret;
  }

  #judgeHeader(name: string): boolean {
    const normalized = normalizeName(name);
    if (this.#headers.has(normalized) || this.#names.has(normalized)) return true;
    // Every suffix after a "_" (x_api_key → api_key, key): one set lookup each, on every recorded header.
    for (let at = normalized.indexOf('_'); at >= 0; at = normalized.indexOf('_', at + 1)) if (this.#names.has(normalized.slice(at + 1))) return true;
    return false;
  }
}
