/**
 * Reservoir sampling (Vitter's algorithm R): a uniform sample of at most
 * `size` items from a stream of unknown length, in O(size) memory, with a
 * seeded generator so tests and decisions are reproducible.
 */
import { InternalError, seededRandom } from '../core/index.js';

export class Reservoir<T> {
  readonly #size: number;
  readonly #random: () => number;
  #items: T[] = [];
  #seen = 0;

  constructor(size: number, seed = 1) {
    if (!(size >= 1)) throw new InternalError(`reservoir size must be >= 1, got ${size}`);
    this.#size = size;
    this.#random = seededRandom(seed);
  }

  add(item: T): void {
    this.#seen++;
    if (this.#items.length < this.#size) {
      this.#items.push(item);
      return;
    }
    // Item n replaces a random slot with probability size / n: every item seen so far is equally likely to be kept.
    const slot = Math.floor(this.#random() * this.#seen);
    if (slot < this.#size) this.#items[slot] = item;
  }

  /** Drop items for which `keep` is false (e.g. reports older than the window). */
  retain(keep: (item: T) => boolean): void {
    this.#items = this.#items.filter(keep);
    this.#seen = Math.min(this.#seen, this.#items.length);
  }

  get items(): readonly T[] {
    return this.#items;
  }

  get seen(): number {
    return this.#seen;
  }
}
