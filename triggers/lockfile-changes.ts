/**
 * Narrowing a lockfile change to what it can reach: the resolved entries
 * whose fingerprint changed (or that appeared or went), closed upward over
 * "depends on" at both ends, name the packages whose resolved dependency
 * closure changed — a bumped transitive package names every package that
 * holds it, however it is hoisted. Where the lockfile records each workspace
 * importer's direct dependencies (pnpm), the importers whose direct
 * dependencies' closures changed are named too. A lockfile that cannot be
 * read at either end is `unreadable`, with why: the change then selects
 * everything, as any global input does.
 */
import { lockfileKind, parseLockfile, type LockModel } from './lockfile-formats.js';

export interface LockfileChange {
  /** Package names whose resolved closure changed (match them against the packages' declared dependencies). */
  readonly packages: ReadonlySet<string>;
  /** For each of `packages`, the packages in its closure whose own entry changed: what was bumped, to name in reasons. */
  readonly bumpedUnder?: ReadonlyMap<string, readonly string[]>;
  /** Importer directories, relative to the repository root, whose direct dependencies' closures changed (pnpm). */
  readonly importers?: ReadonlySet<string>;
}

export type LockfileReading = LockfileChange | { readonly unreadable: string };

const EMPTY: LockModel = { entries: new Map() };

function read(file: string, text: string | undefined, end: string): LockModel | string {
  const kind = lockfileKind(file);
  if (kind === undefined) return `${file} is not a lockfile Tandem can read (package-lock.json, npm-shrinkwrap.json, yarn.lock, pnpm-lock.yaml)`;
  if (text === undefined) return EMPTY;
  try {
    return parseLockfile(kind, text);
  } catch (error) {
    return `${file} at ${end} is not a readable ${kind} lockfile: ${(error as Error).message.split('\n')[0]}`;
  }
}

/** What changed between the two versions of `file` (undefined text: the file does not exist at that end). */
export function lockfileChange(file: string, before: string | undefined, after: string | undefined): LockfileReading {
  const a = read(file, before, 'base');
  if (typeof a === 'string') return { unreadable: a };
  const b = read(file, after, 'head');
  if (typeof b === 'string') return { unreadable: b };

  const changed = new Set<string>();
  for (const key of new Set([...a.entries.keys(), ...b.entries.keys()]))
    if (a.entries.get(key)?.fingerprint !== b.entries.get(key)?.fingerprint) changed.add(key);
  // Dependents of each entry at either end; then everything above a changed entry.
  const dependents = new Map<string, string[]>();
  for (const model of [a, b])
    for (const [key, e] of model.entries) for (const dep of e.deps) (dependents.get(dep) ?? dependents.set(dep, []).get(dep)!).push(key);
  const nameOf = (key: string): string => (a.entries.get(key) ?? b.entries.get(key))!.name;
  // Everything above each bumped entry, remembering which bumps lie below (a reason names what was bumped,
  // not only the declared dependency whose closure it is in).
  const bumped = [...changed];
  const below = new Map<string, Set<string>>();
  for (const origin of bumped) {
    const seen = new Set([origin]);
    const queue = [origin];
    for (let i = 0; i < queue.length; i++) {
      const key = queue[i]!;
      (below.get(key) ?? below.set(key, new Set()).get(key)!).add(nameOf(origin));
      for (const up of dependents.get(key) ?? []) {
        if (seen.has(up)) continue;
        seen.add(up);
        changed.add(up);
        queue.push(up);
      }
    }
  }
  const packages = new Set<string>();
  const bumpedUnder = new Map<string, string[]>();
  for (const key of changed) {
    const name = nameOf(key);
    packages.add(name);
    bumpedUnder.set(name, [...new Set([...(bumpedUnder.get(name) ?? []), ...(below.get(key) ?? [])])].sort());
  }
  if (!a.importers && !b.importers) return { packages, bumpedUnder };

  const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';
  const importers = new Set<string>();
  for (const importer of new Set([...(a.importers?.keys() ?? []), ...(b.importers?.keys() ?? [])])) {
    const before = a.importers?.get(importer) ?? new Map<string, string>();
    const after = b.importers?.get(importer) ?? new Map<string, string>();
    const touched = [...new Set([...before.keys(), ...after.keys()])].some(
      (name) => before.get(name) !== after.get(name) || changed.has(after.get(name) ?? '') || changed.has(before.get(name) ?? ''),
    );
    if (touched) importers.add(importer === '.' ? dir : dir === '' ? importer : `${dir}/${importer}`);
  }
  return { packages, bumpedUnder, importers };
}
