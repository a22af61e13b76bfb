/**
 * The difference between two responses to the same request, as generalized
 * JSON paths with an example each — or why the pair could not be compared.
 * Bodies kept whole get an exact leaf-by-leaf diff; a body too large to keep
 * is compared by its decoded hash and then by its sketch (see core/json-sketch.ts);
 * a body that is not JSON differs as a whole (`(body)`).
 */
import { MAX_SKETCH_PATHS, sketchOf, type Json, type RequestOutcome } from '../../core/index.js';

export type Difference = { readonly control: string; readonly treatment: string };
export type PairDiff = { readonly skipped: string } | { readonly skipped?: undefined; readonly differing: ReadonlyMap<string, Difference> };

/** The path a non-JSON (or unsketched) body's difference is reported under. */
export const WHOLE_BODY = '(body)';

export function decodeJson(base64: string | undefined): Json | undefined {
  if (base64 === undefined) return undefined;
  try {
    return JSON.parse(Buffer.from(base64, 'base64').toString('utf8')) as Json;
  } catch {
    return undefined;
  }
}

/** Leaves of a JSON value by concrete path (`a.b[2].c`), each with its generalized path (`a.b[].c`); iterative. */
function leaves(value: Json): Map<string, { general: string; value: string }> {
  const out = new Map<string, { general: string; value: string }>();
  const stack: [Json, string, string][] = [[value, '', '']];
  while (stack.length > 0) {
    const [node, path, general] = stack.pop()!;
    if (Array.isArray(node)) {
      if (node.length === 0) out.set(path, { general, value: '[]' });
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i]!, `${path}[${i}]`, `${general}[]`]);
    } else if (node !== null && typeof node === 'object') {
      const keys = Object.keys(node);
      if (keys.length === 0) out.set(path, { general, value: '{}' });
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        stack.push([node[key]!, path === '' ? key : `${path}.${key}`, general === '' ? key : `${general}.${key}`]);
      }
    } else out.set(path, { general, value: JSON.stringify(node) });
  }
  return out;
}

/** Generalized paths where two JSON values differ, with one concrete example each. */
export function differingPaths(a: Json, b: Json): Map<string, Difference> {
  const left = leaves(a);
  const right = leaves(b);
  const differing = new Map<string, Difference>();
  for (const [path, l] of left) {
    const r = right.get(path);
    if (r?.value !== l.value && !differing.has(l.general)) differing.set(l.general, { control: l.value, treatment: r?.value ?? '(absent)' });
  }
  for (const [path, r] of right) if (!left.has(path) && !differing.has(r.general)) differing.set(r.general, { control: '(absent)', treatment: r.value });
  return differing;
}

function sketchDiff(a: Readonly<Record<string, readonly [string, string]>>, b: Readonly<Record<string, readonly [string, string]>>): Map<string, Difference> {
  const differing = new Map<string, Difference>();
  for (const [path, [hash, first]] of Object.entries(a)) {
    const other = b[path];
    if (other === undefined) differing.set(path, { control: `first value ${first}`, treatment: '(absent)' });
    else if (other[0] !== hash) differing.set(path, { control: `first value ${first}`, treatment: `first value ${other[1]}` });
  }
  for (const [path, [, first]] of Object.entries(b)) if (a[path] === undefined) differing.set(path, { control: '(absent)', treatment: `first value ${first}` });
  return differing;
}

const cut = (text: string, max = 200): string => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

function sketchOfOutcome(o: RequestOutcome): Readonly<Record<string, readonly [string, string]>> | undefined {
  if (o.response?.sketch !== undefined) return o.response.sketch;
  const json = decodeJson(o.body);
  return json === undefined ? undefined : sketchOf(json);
}

/** A response body as text for a person: the decoded body cut to `max` characters, or its size and hash when it was not kept. */
export const bodyText = (o: RequestOutcome, max = 200): string =>
  o.body !== undefined
    ? cut(Buffer.from(o.body, 'base64').toString('utf8'), max)
    : o.status === 0
      ? '(no response)'
      : `(${o.response?.decodedBytes ?? o.bytes} bytes, sha1 ${(o.response?.contentHash ?? o.bodyHash).slice(0, 12)}${o.response?.sketch ? ', compared by sketch' : ''})`;
const describeBody = (o: RequestOutcome): string => bodyText(o);

/** Compare the bodies of one pair (control and treatment, or control and control′). */
export function diffResponses(c: RequestOutcome, t: RequestOutcome): PairDiff {
  if (c.status === 0 || t.status === 0) return { skipped: 'no response (transport error)' };
  if (c.response?.skipped !== undefined) return { skipped: c.response.skipped };
  if (t.response?.skipped !== undefined) return { skipped: t.response.skipped };
  if (c.response === undefined || t.response === undefined) {
    // Outcomes stored by an older Tandem: raw bodies, compared only when both are JSON.
    const cj = decodeJson(c.body);
    const tj = decodeJson(t.body);
    if (cj !== undefined && tj !== undefined) return { differing: differingPaths(cj, tj) };
    if (c.bodyHash === t.bodyHash) return { differing: new Map() };
    return { skipped: 'body not kept in a comparable form (stored by an older Tandem)' };
  }
  if (c.response.contentHash === t.response.contentHash) return { differing: new Map() };
  if (c.body !== undefined && t.body !== undefined) {
    const cj = decodeJson(c.body);
    const tj = decodeJson(t.body);
    if (cj !== undefined && tj !== undefined) return { differing: differingPaths(cj, tj) };
  } else {
    const cs = sketchOfOutcome(c);
    const ts = sketchOfOutcome(t);
    if (cs !== undefined && ts !== undefined) {
      const differing = sketchDiff(cs, ts);
      // Equal sketches of different bytes are the same JSON (formatting, key order) — unless a sketch
      // stopped at its path limit, when the difference may lie beyond it.
      const capped = Object.keys(cs).length >= MAX_SKETCH_PATHS || Object.keys(ts).length >= MAX_SKETCH_PATHS;
      return { differing: differing.size > 0 || !capped ? differing : new Map([[WHOLE_BODY, { control: describeBody(c), treatment: describeBody(t) }]]) };
    }
  }
  return { differing: new Map([[WHOLE_BODY, { control: describeBody(c), treatment: describeBody(t) }]]) };
}
