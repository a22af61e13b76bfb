/**
 * Path globs of build graphs and trigger settings: `*` within one path
 * segment, `**` across segments, `?` one character, `{a,b}` alternatives.
 * Paths are repository-relative with forward slashes.
 */
import picomatch from 'picomatch';

/**
 * A regular expression for `glob`, anchored at both ends — picomatch's, the matcher of micromatch and
 * fast-glob, so a glob means here what it means in the tools users write them for. Dotfiles match
 * (`.github/**`), as in a build graph every file counts.
 */
export function globToRegExp(glob: string): RegExp {
  return picomatch.makeRe(glob, { dot: true });
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
