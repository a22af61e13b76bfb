/**
 * Turns schema issues into one line each: the path, what was expected, what
 * was received, and for unknown keys the nearest known key.
 */
import type { z } from 'zod';

type Path = readonly PropertyKey[];

/** `workloads[0].replay.rate` */
export function formatPath(path: Path): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(top level)' : out;
}

/** A compact rendering of a received value for messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** One problem, ready to print; `path` and `key` let callers add a file position. */
export interface FormattedIssue {
  readonly text: string;
  readonly path: Path;
  /** For an unknown key: the key itself (its parent is `path`). */
  readonly key?: string;
}

/** One entry per problem. `schema` is used to suggest the closest known key for typos. */
export function formatIssues(issues: readonly z.core.$ZodIssue[], schema: z.ZodType): FormattedIssue[] {
  const out: FormattedIssue[] = [];
  for (const issue of issues) {
    const emit = (text: string, key?: string): void => {
      out.push(key === undefined ? { text, path: issue.path } : { text, path: issue.path, key });
    };
    const where = formatPath(issue.path);
    const got = `, got ${describeValue(issue.input)}`;
    switch (issue.code) {
      case 'unrecognized_keys': {
        const known = knownKeysAt(schema, issue.path);
        for (const key of issue.keys) {
          const guess = closest(key, known);
          emit(`unknown key "${key}" in ${where}${guess ? ` (did you mean "${guess}"?)` : known.length > 0 ? ` (known keys: ${known.join(', ')})` : ''}`, key);
        }
        break;
      }
      case 'invalid_type':
        // A schema's own message (a duration given as a bare number: which unit it lacks) says more than the type.
        if (issue.input !== undefined && issue.message.startsWith('must be ')) emit(`${where} ${issue.message}`);
        else emit(issue.input === undefined ? `${where} is required (${issue.expected})` : `${where} must be ${article(issue.expected)}${got}`);
        break;
      case 'too_small':
        emit(`${where} ${boundText(issue.origin, issue.inclusive ? '>=' : '>', issue.minimum)}${got}`);
        break;
      case 'too_big':
        emit(`${where} ${boundText(issue.origin, issue.inclusive ? '<=' : '<', issue.maximum)}${got}`);
        break;
      case 'invalid_value':
        emit(`${where} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}${got}`);
        break;
      case 'invalid_union': {
        if ('discriminator' in issue && typeof issue.discriminator === 'string') {
          const options = (issue as { options?: unknown[] }).options ?? [];
          const input = issue.input as Record<string, unknown> | undefined;
          const value = input && typeof input === 'object' ? input[issue.discriminator] : undefined;
          emit(`${where} must be one of ${options.map((o) => JSON.stringify(o)).join(', ')}, got ${describeValue(value)}`);
        } else {
          emit(`${where} matches none of the allowed forms${got}`);
        }
        break;
      }
      case 'invalid_format':
      case 'custom':
      case 'not_multiple_of':
      default:
        emit(`${where} ${lowerFirst(issue.message)}${issue.input === undefined || typeof issue.input === 'object' ? '' : got}`);
    }
  }
  return out;
}

function boundText(origin: string, op: string, bound: number | bigint): string {
  if (origin === 'array') return `must have ${op} ${bound} items`;
  if (origin === 'string') return `must have ${op} ${bound} characters`;
  return `must be ${op} ${bound}`;
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

interface SchemaDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  options?: z.ZodType[];
}

function defOf(schema: z.ZodType): SchemaDef {
  return (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;
}

/** The object schemas reachable at `path`, unwrapping defaults, pipes and unions. */
function objectsAt(schema: z.ZodType, path: Path): SchemaDef[] {
  const def = defOf(schema);
  if (def.innerType) return objectsAt(def.innerType, path);
  if (def.type === 'pipe' && def.in) return objectsAt(def.in, path);
  if (def.options) return def.options.flatMap((option) => objectsAt(option, path));
  if (path.length === 0) return def.type === 'object' ? [def] : [];
  const [head, ...rest] = path;
  if (def.type === 'array' && def.element && typeof head === 'number') return objectsAt(def.element, rest);
  const child = def.type === 'object' && typeof head === 'string' ? def.shape?.[head] : undefined;
  return child ? objectsAt(child, rest) : [];
}

function knownKeysAt(schema: z.ZodType, path: Path): string[] {
  const keys = new Set<string>();
  for (const def of objectsAt(schema, path)) for (const key of Object.keys(def.shape ?? {})) keys.add(key);
  keys.delete('$schema');
  return [...keys].sort();
}

/** Names people reach for from other tools, mapped to ours. */
const SYNONYMS: Readonly<Record<string, string>> = {
  qps: 'rate',
  rps: 'rate',
  requestsPerSecond: 'rate',
  window: 'measure',
  duration: 'measure',
  trialCount: 'count',
  threshold: 'consecutive',
  endpoint: 'url',
};

/** The known key nearest to `key`: a synonym, or by edit distance when near enough to be a typo. */
export function closest(key: string, known: readonly string[]): string | undefined {
  const synonym = SYNONYMS[key];
  if (synonym !== undefined && known.includes(synonym)) return synonym;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(best.length / 3)) ? best : undefined;
}

/** Optimal string alignment distance: edits plus adjacent transpositions ("dri" → "dir" is 1). */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}
