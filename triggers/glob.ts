/**
 * Path globs of build graphs and trigger settings: `*` within one path
 * segment, `**` across segments, `?` one character, `{a,b}` alternatives.
 * Paths are repository-relative with forward slashes.
 */

/** A regular expression for `glob`, anchored at both ends. */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        // `**/` matches zero or more whole segments; a trailing `**` matches everything below.
        if (glob[i + 2] === '/') {
          out += '(?:.*/)?';
          i += 2;
        } else {
          out += '.*';
          i += 1;
        }
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '{') {
      const end = glob.indexOf('}', i);
      if (end === -1) out += '\\{';
      else {
        out += `(?:${glob
          .slice(i + 1, end)
          .split(',')
          .map((part) => part.replace(/[.+^$()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
          .join('|')})`;
        i = end;
      }
    } else out += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

/** The directory part of a glob before its first wildcard ("" for a glob that starts with one). */
export function staticPrefix(glob: string): string {
  const wildcard = glob.search(/[*?{]/);
  const fixed = wildcard === -1 ? glob : glob.slice(0, wildcard);
  const slash = fixed.lastIndexOf('/');
  return wildcard === -1 ? glob : slash === -1 ? '' : fixed.slice(0, slash);
}

export function matchesAny(path: string, globs: readonly RegExp[]): boolean {
  return globs.some((g) => g.test(path));
}
