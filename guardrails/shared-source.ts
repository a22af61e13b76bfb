/**
 * One poller per (source, interval): detectors of many concurrent
 * experiments that watch the same source read one shared scrape, so N
 * experiments do not multiply the load on the dependency. A read joins a
 * scrape in flight, or reuses one younger than the interval.
 */
import { request } from 'undici';
import type { Clock } from '../core/index.js';
import { UpstreamError } from '../core/index.js';

interface Entry {
  atMs: number;
  pending?: Promise<string>;
  text?: string;
}

export class SharedSource {
  readonly #entries = new Map<string, Entry>();
  #scrapes = 0;

  constructor(readonly clock: Clock) {}

  /** Scrapes made so far (for the benchmark and tests). */
  get scrapes(): number {
    return this.#scrapes;
  }

  /** The body at `url`, fetched at most once per `maxAgeMs`. Rejects when the source cannot be read. */
  async read(url: string, maxAgeMs: number): Promise<string> {
    const key = `${maxAgeMs}|${url}`;
    let entry = this.#entries.get(key);
    const now = this.clock.now();
    if (entry?.pending) return entry.pending;
    if (entry?.text !== undefined && now - entry.atMs < maxAgeMs) return entry.text;
    if (!entry) this.#entries.set(key, (entry = { atMs: now }));
    const current = entry;
    this.#scrapes++;
    current.pending = (async () => {
      const response = await request(url, { headersTimeout: 5_000, bodyTimeout: 5_000 });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new UpstreamError(`${url} answered ${response.statusCode}`);
      return text;
    })();
    try {
      current.text = await current.pending;
      current.atMs = this.clock.now();
      return current.text;
    } catch (error) {
      current.text = undefined;
      throw error;
    } finally {
      current.pending = undefined;
    }
  }
}
