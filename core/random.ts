/**
 * Deterministic randomness and hashing: a seeded PRNG for every random choice
 * an experiment makes (so it can be reproduced from its stored seed), and a
 * string hash that is stable across processes and platforms.
 */

/** 32-bit FNV-1a of `text[start, end)`, without allocating. */
export function fnv1a(text: string, start = 0, end = text.length): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: uniform numbers in [0, 1) from a 32-bit seed; small, fast, well spread. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
