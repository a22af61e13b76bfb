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
    this.#longestRun = Math.max(...[...this.#names, ...this.#headers].map((n) => n.split('_').length));
  }

  /** Words in the longest secret name: runs longer than it cannot match, so a hostile 8,000-word header name costs linear time. */
  readonly #longestRun: number;

  /** A query parameter, form field or JSON field. */
  isSecretName(name: string): boolean {
    return this.#names.has(normalizeName(name));
  }

  /**
   * A header: a listed header or a secret name, also as a word run inside a longer name
   * (`x-api-key`, `x-auth-token-v2`, `x-forwarded-authorization`, `x-original-cookie`).
   */
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
    // Every run of whole words (x_auth_token_v2 → auth_token, token, …): a few set lookups per distinct
    // header name, remembered above, so a recorded request pays one map lookup per header.
    const words = normalized.split('_');
    for (let from = 0; from < words.length; from++) {
      for (let to = from + 1; to <= Math.min(words.length, from + this.#longestRun); to++) {
        const run = words.slice(from, to).join('_');
        if (this.#names.has(run) || this.#headers.has(run)) return true;
      }
    }
    return false;
  }
}
