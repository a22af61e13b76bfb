/**
 * A body copied as it passes, up to a limit, for whoever needs its bytes afterwards (the recorder's records, the
 * replayer's comparison, the router's failover between pinned shards): past the limit only its size is counted,
 * and optionally its SHA-1 over every byte. Every copy in the process also draws on one budget (BODY_BUDGET): a
 * copy that cannot have more of it stops keeping bytes, as if over its own limit, so many large bodies at once do
 * not take the process's memory with them (issue 69, finding 6).
 */
import { createHash, hash, type Hash } from 'node:crypto';
import { TRANSPORT_DEFAULTS } from '../core/index.js';

/** The bytes all copies of a process may hold together. */
export class BodyBudget {
  #held = 0;
  #bytes: number;
  constructor(bytes: number) {
    this.#bytes = bytes;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** A new size for what is reserved from now on; bytes held beyond it are kept until released. */
  resize(bytes: number): void {
    this.#bytes = bytes;
  }

  get held(): number {
    return this.#held;
  }

  reserve(bytes: number): boolean {
    if (this.#held + bytes > this.bytes) return false;
    this.#held += bytes;
    return true;
  }

  release(bytes: number): void {
    this.#held = Math.max(0, this.#held - bytes);
  }
}

/** The process's budget: 256 MiB unless configured (net/transport-limits.ts), room for a few dozen bodies at every component's own limit. */
export const BODY_BUDGET = new BodyBudget(TRANSPORT_DEFAULTS.bodyBudgetBytes);

export class BodyCopy {
  readonly #chunks: Buffer[] = [];
  readonly #hashed: boolean;
  /**
   * Most bodies are one chunk: it is hashed in one call when the digest is asked for, and a running hash is made
   * only at a second chunk: the replayer hashes every answer, and a Hash object per answer is a cost on its hot path.
   */
  #firstChunk: Buffer | undefined;
  #hash: Hash | undefined;
  readonly #budget: BodyBudget;
  #kept = 0;
  #size = 0;
  #overflowed = false;
  #released = false;

  constructor(
    readonly limit: number,
    options: { readonly hash?: boolean; readonly budget?: BodyBudget } = {},
  ) {
    this.#hashed = options.hash === true;
    this.#budget = options.budget ?? BODY_BUDGET;
  }

  add(chunk: Buffer): void {
    this.#size += chunk.length;
    if (this.#hashed) this.#hashChunk(chunk);
    if (this.#overflowed || this.#released) return;
    if (this.#kept + chunk.length > this.limit || !this.#budget.reserve(chunk.length)) return this.#overflow();
    this.#chunks.push(chunk);
    this.#kept += chunk.length;
  }

  /** Every byte seen, kept or not. */
  get size(): number {
    return this.#size;
  }

  /** Not every byte was kept: over the copy's limit, or the process's budget. */
  get truncated(): boolean {
    return this.#overflowed;
  }

  /** The bytes kept: the whole body, or empty once truncated. Most bodies are one chunk: no copy then. */
  bytes(): Buffer {
    if (this.#overflowed) return Buffer.alloc(0);
    return this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#kept);
  }

  /** SHA-1 of every byte seen, hex (with `hash: true`); asked once. */
  digest(): string {
    if (!this.#hashed) return '';
    if (this.#hash) return this.#hash.digest('hex');
    return hash('sha1', this.#firstChunk ?? Buffer.alloc(0));
  }

  #hashChunk(chunk: Buffer): void {
    if (this.#hash) {
      this.#hash.update(chunk);
    } else if (this.#firstChunk === undefined) {
      this.#firstChunk = chunk;
    } else {
      this.#hash = createHash('sha1').update(this.#firstChunk).update(chunk);
      this.#firstChunk = undefined;
    }
  }

  /** Give the bytes back to the budget; call once the bytes are used (they stay readable). */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#budget.release(this.#kept);
  }

  #overflow(): void {
    this.#overflowed = true;
    this.#budget.release(this.#kept);
    this.#chunks.length = 0;
    this.#kept = 0;
  }
}
