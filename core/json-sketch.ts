/**
 * A bounded structural digest of a JSON value, for comparing bodies too large
 * to keep: per generalized path (`items[].id`, array indexes dropped) a hash of
 * the values found there in document order, and the first of them. Two bodies
 * differ at a path exactly when its hashes differ (up to hash collisions).
 */
import { createHash, type Hash } from 'node:crypto';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Generalized paths a sketch keeps; a body with more is compared by its hash and these paths. */
export const MAX_SKETCH_PATHS = 2_000;
const FIRST_VALUE_CHARS = 120;

/** Iterative (a deep body cannot overflow the stack); stops adding paths at MAX_SKETCH_PATHS. */
export function sketchOf(value: Json): Record<string, readonly [string, string]> {
  const hashes = new Map<string, { hash: Hash; first: string }>();
  const stack: [Json, string][] = [[value, '']];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (Array.isArray(node)) {
      if (node.length === 0) add(hashes, path, '[]');
      // Pushed in reverse so values are hashed in document order.
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i]!, `${path}[]`]);
    } else if (node !== null && typeof node === 'object') {
      const keys = Object.keys(node);
      if (keys.length === 0) add(hashes, path, '{}');
      for (let i = keys.length - 1; i >= 0; i--) stack.push([node[keys[i]!]!, path === '' ? keys[i]! : `${path}.${keys[i]!}`]);
    } else add(hashes, path, JSON.stringify(node));
  }
  const sketch: Record<string, readonly [string, string]> = {};
  for (const [path, entry] of hashes) sketch[path] = [entry.hash.digest('hex').slice(0, 16), entry.first];
  return sketch;
}

function add(hashes: Map<string, { hash: Hash; first: string }>, path: string, value: string): void {
  let entry = hashes.get(path);
  if (entry === undefined) {
    if (hashes.size >= MAX_SKETCH_PATHS) return;
    entry = { hash: createHash('sha1'), first: value.length > FIRST_VALUE_CHARS ? `${value.slice(0, FIRST_VALUE_CHARS - 3)}...` : value };
    hashes.set(path, entry);
  }
  entry.hash.update(value).update('\u0000');
}
