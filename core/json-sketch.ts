/**
 * A bounded structural digest of a JSON value, for comparing bodies too large
 * to keep: per generalized path (`items[].id`, array indexes dropped) a hash of
 * the values found there in document order, and the first of them. Two bodies
 * differ at a path exactly when its hashes differ (up to hash collisions).
 */
import { createHash } from 'node:crypto';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Generalized paths a sketch keeps; a body with more is compared by its hash and these paths. */
export const MAX_SKETCH_PATHS = 2_000;
const FIRST_VALUE_CHARS = 120;

/** Iterative (a deep body cannot overflow the stack); stops adding paths at MAX_SKETCH_PATHS. */
export function sketchOf(value: Json): Record<string, readonly [string, string]> {
  // Values are collected per path and hashed once per path at the end: one hash call per path, not per
  // value. Child paths are made once per (parent path, key): the elements of a long array share them.
  const values = new Map<string, string[]>();
  const childPaths = new Map<string, Map<string, string>>();
  const childPath = (parent: string, key: string): string => {
    let byKey = childPaths.get(parent);
    if (byKey === undefined) childPaths.set(parent, (byKey = new Map()));
    let path = byKey.get(key);
    if (path === undefined) byKey.set(key, (path = parent === '' ? key : `${parent}.${key}`));
    return path;
  };
  // Two parallel stacks, not one of tuples: no allocation per value.
  const nodes: Json[] = [value];
  const paths: string[] = [''];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const path = paths.pop()!;
    if (Array.isArray(node)) {
      if (node.length === 0) add(values, path, '[]');
      const elementPath = `${path}[]`;
      // Pushed in reverse so values are collected in document order.
      for (let i = node.length - 1; i >= 0; i--) {
        nodes.push(node[i]!);
        paths.push(elementPath);
      }
    } else if (node !== null && typeof node === 'object') {
      const keys = Object.keys(node);
      if (keys.length === 0) add(values, path, '{}');
      for (let i = keys.length - 1; i >= 0; i--) {
        nodes.push(node[keys[i]!]!);
        paths.push(childPath(path, keys[i]!));
      }
    } else add(values, path, typeof node === 'string' ? JSON.stringify(node) : String(node));
  }
  const sketch: Record<string, readonly [string, string]> = {};
  for (const [path, list] of values) {
    const first = list[0]!;
    sketch[path] = [
      createHash('sha1').update(list.join('\u0000')).digest('hex').slice(0, 16),
      first.length > FIRST_VALUE_CHARS ? `${first.slice(0, FIRST_VALUE_CHARS - 3)}...` : first,
    ];
  }
  return sketch;
}

function add(values: Map<string, string[]>, path: string, value: string): void {
  const list = values.get(path);
  if (list !== undefined) list.push(value);
  else if (values.size < MAX_SKETCH_PATHS) values.set(path, [value]);
}
