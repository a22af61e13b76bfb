/**
 * Endpoints as a person names them: method plus a route pattern inferred
 * from the recorded paths (`GET /posts/:id/comments`), as Diffy groups its
 * differences. A path segment is a parameter when it looks like an id
 * (digits, a UUID, a long hex or token with digits) or when, among paths of
 * the same method, length and preceding pattern, that position takes many
 * distinct values (names, slugs). Query parameter names are part of the
 * endpoint (`GET /posts?_page&_limit`); their values are not.
 */
const ID_LIKE = /^(?:\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{12,}|(?=[^/]*\d)[A-Za-z0-9_.~-]{16,})$/i;
/** A position is a parameter when it has at least this many distinct values making up at least this share of its paths. */
const MIN_DISTINCT = 8;
const MIN_DISTINCT_SHARE = 0.5;

const pathOnly = (path: string): string => {
  const q = path.search(/[?#]/);
  return q < 0 ? path : path.slice(0, q);
};

/**
 * The query's parameter names, sorted and once each (`?_order&_sort`): `/posts?_sort=…` and `/posts?userId=…`
 * are different calls of one route, and a difference in one (sorting returning `[]`) must not hide behind
 * the other's example. Values are left out: they vary per request like path ids.
 */
function queryShape(path: string): string {
  const q = path.indexOf('?');
  if (q < 0) return '';
  const hash = path.indexOf('#', q);
  let names: string[];
  try {
    names = [...new Set(new URLSearchParams(path.slice(q + 1, hash < 0 ? undefined : hash)).keys())].sort();
  } catch {
    return '?…';
  }
  return names.length === 0 ? '' : `?${names.join('&')}`;
}

/**
 * A request's path with id-like segments as `:id` and its query reduced to its parameter names: what
 * endpoint inference reads of it, so requests of one shape are kept once, with a count.
 */
export function requestShape(path: string): string {
  return `${pathOnly(path)
    .split('/')
    .map((s) => (ID_LIKE.test(s) ? ':id' : s))
    .join('/')}${queryShape(path)}`;
}

/** The route pattern of each `method path`, inferred from all of them together; `count` weighs a request kept once for several. */
export function inferEndpoints(requests: readonly { readonly method: string; readonly path: string; readonly count?: number }[]): Map<string, string> {
  const split = requests.map((r) => ({
    method: r.method.toUpperCase(),
    raw: `${r.method} ${r.path}`,
    count: r.count ?? 1,
    segments: pathOnly(r.path)
      .split('/')
      .map((s) => (ID_LIKE.test(s) ? ':id' : s)),
  }));
  // Left to right: at each position, group by method, length and the pattern so far; many distinct values make a parameter.
  const longest = Math.max(0, ...split.map((s) => s.segments.length));
  for (let position = 1; position < longest; position++) {
    const groups = new Map<string, { values: Set<string>; members: typeof split; requests: number }>();
    for (const s of split) {
      if (position >= s.segments.length || s.segments[position] === ':id') continue;
      const key = `${s.method} ${s.segments.length} ${s.segments.slice(0, position).join('/')}`;
      const group = groups.get(key) ?? { values: new Set<string>(), members: [], requests: 0 };
      group.values.add(s.segments[position]!);
      group.members.push(s);
      group.requests += s.count;
      groups.set(key, group);
    }
    for (const group of groups.values()) {
      if (group.values.size >= MIN_DISTINCT && group.values.size / group.requests >= MIN_DISTINCT_SHARE)
        for (const s of group.members) s.segments[position] = ':param';
    }
  }
  return new Map(split.map((s, i) => [s.raw, `${s.method} ${s.segments.join('/') || '/'}${queryShape(requests[i]!.path)}`]));
}
