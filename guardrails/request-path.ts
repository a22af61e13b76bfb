/**
 * The path a server will act on, for matching `writePaths`: decoded,
 * dot-segments resolved, repeated slashes collapsed, `;params` dropped,
 * case folded. A raw prefix match let `/ADMIN`, `//admin`, `/./admin`,
 * `/x/../admin`, `/%61dmin`, `/admin;x` and `/admin%2f` past a block on
 * `/admin`; each of these spellings normalizes to `/admin` here. A path that
 * cannot be normalized (a bad escape, a NUL, `..` above the root) is
 * undefined, and the router refuses it.
 */

/**
 * A path already in normal form but for case: segments of plain characters (RFC 3986 pchars less `%` and `;`), none
 * empty and none starting with a dot (so never `.` or `..`). Every gRPC path is one; it skips the work below.
 */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_~!$&'()*+,=:@-][A-Za-z0-9._~!$&'()*+,=:@-]*)+\/?$/;

export function normalizedPath(target: string): string | undefined {
  const end = target.search(/[?#]/);
  const raw = end < 0 ? target : target.slice(0, end);
  return PLAIN_PATH.test(raw) ? raw.toLowerCase() : normalizedBySegments(raw);
}

/** The general case: each segment decoded, its `;params` dropped, dot-segments resolved. Exported for its test. */
export function normalizedBySegments(raw: string): string | undefined {
  if (!raw.startsWith('/')) return undefined;
  let decoded: string;
  try {
    // `;params` belong to their segment (RFC 3986 §3.3) and many servers ignore them when routing.
    decoded = raw
      .split('/')
      .map((segment) => decodeURIComponent(segment.split(';')[0]!))
      .join('/');
  } catch {
    return undefined;
  }
  // eslint-disable-next-line no-control-regex -- NUL and other controls in a path are an attack, not a route
  if (/[\u0000-\u001f]/.test(decoded)) return undefined;
  const out: string[] = [];
  for (const segment of decoded.replaceAll('\\', '/').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (out.length === 0) return undefined;
      out.pop();
      continue;
    }
    out.push(segment);
  }
  const trailing = decoded.endsWith('/') && out.length > 0 ? '/' : '';
  return `/${out.join('/')}${trailing}`.toLowerCase();
}

/** Does the normalized path fall under the normalized prefix (itself, or below it)? */
export function underPrefix(path: string, prefix: string): boolean {
  const base = prefix.replace(/\/+$/, '');
  if (base === '') return true;
  return path === base || path.startsWith(`${base}/`);
}
