/**
 * Which requests to record. Uniform sampling at a rate in (0, 1], or sticky
 * by a key (a header or a query parameter, hashed as GoReplay's limiter does)
 * so whole sessions are kept or dropped together. The decision for a request
 * that is not sampled allocates nothing: it is on the recorded service's path.
 *
 * The sampler also sheds: after an overflow or a store error it halves its
 * own rate, and after each successful write it recovers one step (doubling,
 * at most once per `recoveryIntervalMs`) back to the configured rate — the
 * recorder must never be what hurts production (AREX does the same).
 */
import { fnv1a, InputError, type Clock } from '../core/index.js';

/** How a sampled request was chosen; stored with the record. */
export type SampleMode = 'uniform' | 'sticky';

/** Where a sticky key is read from. */
export type StickyKey = { readonly header: string } | { readonly query: string };

export interface SamplerOptions {
  /** Share of requests to sample, in (0, 1]. */
  readonly rate: number;
  readonly stickyKey?: StickyKey;
  readonly clock: Clock;
  /** Lowest share of the configured rate shedding may go to. @default 1/1024 */
  readonly minShedFactor?: number;
  /** Shortest time between two recovery steps. @default 1000 */
  readonly recoveryIntervalMs?: number;
  /** Random numbers in [0, 1); injectable for tests. @default Math.random */
  readonly random?: () => number;
  /** Told whenever the effective rate changes, e.g. to log it. */
  readonly onRateChange?: (effectiveRate: number, reason: 'shed' | 'recover') => void;
}

/** Hash of a query parameter's value in `url`, or -1 when absent. No allocation. */
function queryParameterHash(url: string, name: string): number {
  const question = url.indexOf('?');
  if (question < 0) return -1;
  let at = question + 1;
  while (at < url.length) {
    const amp = url.indexOf('&', at);
    const end = amp < 0 ? url.length : amp;
    if (end - at > name.length && url.charCodeAt(at + name.length) === 61 /* = */ && url.startsWith(name, at)) {
      return fnv1a(url, at + name.length + 1, end);
    }
    at = end + 1;
  }
  return -1;
}

const HASH_SPACE = 4_294_967_296;

export class Sampler {
  readonly configuredRate: number;
  readonly mode: SampleMode;
  readonly #options: SamplerOptions;
  readonly #random: () => number;
  readonly #stickyHeader: string | undefined;
  readonly #stickyQuery: string | undefined;
  #shedFactor = 1;
  #effectiveRate: number;
  #lastRecoveryMs = Number.NEGATIVE_INFINITY;

  constructor(options: SamplerOptions) {
    if (!(options.rate > 0 && options.rate <= 1)) throw new InputError(`sampling rate must be in (0, 1], got ${options.rate}`);
    this.#options = options;
    this.configuredRate = options.rate;
    this.#effectiveRate = options.rate;
    this.#random = options.random ?? Math.random;
    this.#stickyHeader = options.stickyKey && 'header' in options.stickyKey ? options.stickyKey.header.toLowerCase() : undefined;
    this.#stickyQuery = options.stickyKey && 'query' in options.stickyKey ? options.stickyKey.query : undefined;
    this.mode = options.stickyKey ? 'sticky' : 'uniform';
  }

  /** The rate in force now: the configured rate times the shedding factor. */
  get effectiveRate(): number {
    return this.#effectiveRate;
  }

  /**
   * Should this request be recorded? `url` is the path and query; `headers`
   * are Node's lower-cased request headers. A sticky sampler without its key
   * on a request falls back to a uniform draw, so keyless traffic is still seen.
   */
  sample(url: string, headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
    if (this.#stickyHeader !== undefined) {
      const value = headers[this.#stickyHeader];
      if (typeof value === 'string') return fnv1a(value) / HASH_SPACE < this.#effectiveRate;
    } else if (this.#stickyQuery !== undefined) {
      const hash = queryParameterHash(url, this.#stickyQuery);
      if (hash >= 0) return hash / HASH_SPACE < this.#effectiveRate;
    }
    return this.#random() < this.#effectiveRate;
  }

  /** The buffer overflowed or the store failed: halve the rate, down to the floor. */
  shed(): void {
    const floor = this.#options.minShedFactor ?? 1 / 1024;
    if (this.#shedFactor <= floor) return;
    this.#shedFactor = Math.max(floor, this.#shedFactor / 2);
    this.#effectiveRate = this.configuredRate * this.#shedFactor;
    this.#lastRecoveryMs = this.#options.clock.now();
    this.#options.onRateChange?.(this.#effectiveRate, 'shed');
  }

  /** A write succeeded: take one recovery step, at most once per interval. */
  recover(): void {
    if (this.#shedFactor >= 1) return;
    const now = this.#options.clock.now();
    if (now - this.#lastRecoveryMs < (this.#options.recoveryIntervalMs ?? 1_000)) return;
    this.#lastRecoveryMs = now;
    this.#shedFactor = Math.min(1, this.#shedFactor * 2);
    this.#effectiveRate = this.configuredRate * this.#shedFactor;
    this.#options.onRateChange?.(this.#effectiveRate, 'recover');
  }
}
