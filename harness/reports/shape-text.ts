/**
 * A response's shape change in words, from an example pair: "array → object {first, prev, next, last,
 * pages, items, data}" says at once what four "[].x → (absent)" field lines leave a reader to work out.
 * Only the top level is described. Example bodies are cut for display, so a body that no longer parses is
 * read by its first character, and an object's keys are then taken from the pair's differing field paths
 * (`data[].id` → `data`).
 */
type Shape = { readonly kind: string; readonly keys?: readonly string[] };

function shapeOf(body: string): Shape | undefined {
  try {
    const value: unknown = JSON.parse(body);
    if (Array.isArray(value)) return { kind: 'array' };
    if (value === null) return { kind: 'null' };
    if (typeof value === 'object') return { kind: 'object', keys: Object.keys(value) };
    return { kind: typeof value };
  } catch {
    const first = body.trimStart()[0];
    return first === '[' ? { kind: 'array' } : first === '{' ? { kind: 'object' } : undefined;
  }
}

function describe(shape: Shape, keysFromPaths: readonly string[]): string {
  if (shape.kind !== 'object') return shape.kind;
  const keys = shape.keys ?? keysFromPaths;
  return keys.length === 0 ? 'object' : `object {${keys.slice(0, 8).join(', ')}${keys.length > 8 ? ', …' : ''}}`;
}

/** "array → object {…}", or undefined when the top-level shape is the same (or unknown) at both ends. */
export function shapeChange(controlBody: string, treatmentBody: string, differingPaths: readonly string[] = []): string | undefined {
  const before = shapeOf(controlBody);
  const after = shapeOf(treatmentBody);
  if (before === undefined || after === undefined) return undefined;
  // Keys named by differing paths that start at an object root.
  const roots = [...new Set(differingPaths.filter((p) => p !== '' && !p.startsWith('[')).map((p) => p.split(/[.[]/)[0]!))];
  const said = [describe(before, before.kind === after.kind ? [] : roots), describe(after, before.kind === after.kind ? [] : roots)];
  return said[0] === said[1] ? undefined : `${said[0]} → ${said[1]}`;
}
