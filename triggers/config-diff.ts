/**
 * Which settings a config change touches: the JSON or YAML before and after,
 * flattened to dotted paths (arrays compared whole, at their path), and the
 * paths whose values differ. Files that are not JSON/YAML, or do not parse on
 * both sides, have no setting-level answer (undefined): selection then falls
 * back to the file.
 */
import { parse as parseYaml } from 'yaml';

type Value = unknown;

function flatten(value: Value, path: string, out: Map<string, string>): Map<string, string> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 0 && path !== '') out.set(path, '{}');
    for (const key of keys) flatten((value as Record<string, Value>)[key], path === '' ? key : `${path}.${key}`, out);
  } else out.set(path, JSON.stringify(value) ?? 'undefined');
  return out;
}

function parse(file: string, text: string): Value | undefined {
  try {
    return /\.json$/i.test(file) ? JSON.parse(text) : /\.ya?ml$/i.test(file) ? parseYaml(text) : undefined;
  } catch {
    return undefined;
  }
}

/** Dotted paths of the settings that differ; undefined when the file cannot be compared setting by setting. */
export function changedSettings(file: string, before: string | undefined, after: string | undefined): string[] | undefined {
  const a = before === undefined ? {} : parse(file, before);
  const b = after === undefined ? {} : parse(file, after);
  if (a === undefined || b === undefined) return undefined;
  const left = flatten(a, '', new Map());
  const right = flatten(b, '', new Map());
  const changed = new Set<string>();
  for (const [path, value] of left) if (right.get(path) !== value) changed.add(path);
  for (const path of right.keys()) if (!left.has(path)) changed.add(path);
  return [...changed].sort();
}
