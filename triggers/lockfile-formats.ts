/**
 * Lockfiles read into one model: resolved entries (a name, a fingerprint of
 * what was resolved, and the entries each one depends on) plus, where the
 * format records them (pnpm), each workspace importer's direct dependencies.
 * npm's package-lock.json (v1 nested `dependencies`, v2/v3 `packages`),
 * yarn.lock (v1 and Berry, both through @yarnpkg/parsers — the parser Yarn
 * itself uses) and pnpm-lock.yaml (v5, v6 and v9 key forms). Workspace
 * packages themselves (links) are left to the build graph.
 */
import { createRequire } from 'node:module';
import { parse as parseYaml } from 'yaml';

/** Loaded on the first yarn.lock, not on every `tandem affected` start. */
const require = createRequire(import.meta.url);
const yarnParsers = (): typeof import('@yarnpkg/parsers') => require('@yarnpkg/parsers') as typeof import('@yarnpkg/parsers');

export interface LockEntry {
  readonly name: string;
  readonly fingerprint: string;
  readonly deps: readonly string[];
}

export interface LockModel {
  readonly entries: ReadonlyMap<string, LockEntry>;
  /** Importer directory (relative to the lockfile's directory, "." for its root) → direct dependency name → entry key. */
  readonly importers?: ReadonlyMap<string, ReadonlyMap<string, string>>;
}

export type LockfileKind = 'npm' | 'yarn' | 'pnpm';

export function lockfileKind(file: string): LockfileKind | undefined {
  const base = file.slice(file.lastIndexOf('/') + 1);
  if (base === 'package-lock.json' || base === 'npm-shrinkwrap.json') return 'npm';
  if (base === 'yarn.lock') return 'yarn';
  if (base === 'pnpm-lock.yaml') return 'pnpm';
  return undefined;
}

type Dict = Record<string, unknown>;
const isDict = (v: unknown): v is Dict => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
const depNames = (entry: Dict, fields: readonly string[]): [string, string][] =>
  fields.flatMap((f) => (isDict(entry[f]) ? Object.entries(entry[f]).map(([n, r]): [string, string] => [n, str(r)]) : []));

/** Package name of a descriptor or key like `@scope/name@range` (the last `@` not at the start). */
function nameOf(descriptor: string): string {
  const at = descriptor.indexOf('@', 1);
  return at === -1 ? descriptor : descriptor.slice(0, at);
}

/** Parse `text` as a lockfile of `kind`; throws with the reason when it is not one. */
export function parseLockfile(kind: LockfileKind, text: string): LockModel {
  if (kind === 'npm') return parseNpm(text);
  if (kind === 'yarn') return parseYarn(text);
  return parsePnpm(text);
}

function parseNpm(text: string): LockModel {
  const lock = JSON.parse(text) as unknown;
  if (!isDict(lock)) throw new Error('not a JSON object');
  const flat = new Map<string, Dict>();
  if (isDict(lock.packages)) {
    for (const [path, e] of Object.entries(lock.packages)) if (path.includes('node_modules/') && isDict(e) && e.link !== true) flat.set(path, e);
  } else if (isDict(lock.dependencies)) {
    // v1: nested `dependencies`, each with `requires`; flattened to v2's node_modules paths.
    const walk = (deps: Dict, prefix: string): void => {
      for (const [name, e] of Object.entries(deps)) {
        if (!isDict(e)) continue;
        const path = `${prefix}node_modules/${name}`;
        flat.set(path, { ...e, dependencies: e.requires });
        if (isDict(e.dependencies)) walk(e.dependencies, `${path}/`);
      }
    };
    walk(lock.dependencies, '');
  } else throw new Error('neither a "packages" (v2, v3) nor a "dependencies" (v1) map');
  const entries = new Map<string, LockEntry>();
  for (const [path, e] of flat) {
    const deps = depNames(e, ['dependencies', 'optionalDependencies', 'peerDependencies']).flatMap(([dep]) => {
      // Node's resolution: the nearest node_modules/dep walking up from the entry's own folder.
      for (let dir = path; ;) {
        const candidate = `${dir}/node_modules/${dep}`;
        if (flat.has(candidate)) return [candidate];
        const up = dir.lastIndexOf('/node_modules/');
        if (up === -1) return flat.has(`node_modules/${dep}`) ? [`node_modules/${dep}`] : [];
        dir = dir.slice(0, up);
      }
    });
    entries.set(path, {
      name: path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length),
      fingerprint: `${str(e.version)}|${str(e.resolved)}|${str(e.integrity)}`,
      deps,
    });
  }
  return { entries };
}

function parseYarn(text: string): LockModel {
  const lock = yarnParsers().parseSyml(text) as unknown;
  if (!isDict(lock)) throw new Error('not a yarn lockfile');
  const byDescriptor = new Map<string, string>();
  const byName = new Map<string, string[]>();
  const raw = new Map<string, Dict>();
  for (const [key, e] of Object.entries(lock)) {
    if (key === '__metadata' || !isDict(e)) continue;
    const descriptors = key
      .split(/,\s*/)
      .map((d) => d.trim())
      .filter((d) => d !== '');
    const resolution = str(e.resolution);
    // Workspace and portal packages are the build graph's business.
    if (descriptors.some((d) => /@(workspace|portal|link):/.test(d)) || /@(workspace|portal|link):/.test(resolution)) continue;
    // Keyed by what was resolved (name@version), not by the descriptor list: a list that gained or lost a
    // range while the resolution stayed the same is no change.
    const canonical = `${nameOf(descriptors[0]!)}@${str(e.version) || descriptors[0]!}`;
    if (raw.has(canonical)) {
      for (const d of descriptors) byDescriptor.set(d, canonical);
      continue; // v1 repeats one entry under each of its descriptors
    }
    raw.set(canonical, e);
    for (const d of descriptors) byDescriptor.set(d, canonical);
    const name = nameOf(canonical);
    byName.set(name, [...(byName.get(name) ?? []), canonical]);
  }
  const entries = new Map<string, LockEntry>();
  for (const [key, e] of raw) {
    const deps = depNames(e, ['dependencies', 'optionalDependencies']).flatMap(([dep, range]) => {
      // Berry leaves the default npm: protocol out of dependency ranges but keeps it in descriptors.
      const found = byDescriptor.get(`${dep}@${range}`) ?? byDescriptor.get(`${dep}@npm:${range}`);
      return found !== undefined ? [found] : (byName.get(dep) ?? []);
    });
    entries.set(key, {
      name: nameOf(key),
      fingerprint: `${str(e.version)}|${str(e.resolved)}|${str(e.resolution)}|${str(e.integrity)}|${str(e.checksum)}`,
      deps,
    });
  }
  return { entries };
}

/** pnpm-lock.yaml keys: v5 `/name/1.0.0_peer`, v6 `/name@1.0.0(peer@1)`, v9 `name@1.0.0(peer@1)`. */
function pnpmName(key: string): string {
  const k = key.startsWith('/') ? key.slice(1) : key;
  const plain = k.replace(/\(.*$/, '');
  const at = plain.indexOf('@', 1);
  if (at !== -1) return plain.slice(0, at);
  return plain.slice(0, plain.lastIndexOf('/')); // v5
}

function parsePnpm(text: string): LockModel {
  // Lockfiles hold no anchors worth expanding: an alias bomb is refused as the config loader refuses it.
  const lock = parseYaml(text, { maxAliasCount: 100 }) as unknown;
  if (!isDict(lock) || lock.lockfileVersion === undefined) throw new Error('no lockfileVersion');
  const packages = isDict(lock.packages) ? lock.packages : {};
  const snapshots = isDict(lock.snapshots) ? lock.snapshots : undefined;
  const source = snapshots ?? packages;
  const keys = new Set(Object.keys(source));
  const resolve = (name: string, version: string): string[] => {
    if (version.startsWith('link:') || version.startsWith('workspace:')) return [];
    const candidates = version.startsWith('/') ? [version] : [`${name}@${version}`, `/${name}@${version}`, `/${name}/${version}`, version];
    const found = candidates.find((c) => keys.has(c));
    return found === undefined ? [] : [found];
  };
  const entries = new Map<string, LockEntry>();
  for (const [key, value] of Object.entries(source)) {
    // An entry with nothing under it (`name@1.0.0:`) is YAML null: still a resolved package.
    if (value !== null && !isDict(value)) continue;
    const e: Dict = value ?? {};
    // v9 keeps the resolution under packages (without the peer suffix) and the dependencies under snapshots.
    const meta = snapshots ? packages[key.replace(/\(.*$/, '')] : e;
    const resolution =
      isDict(meta) && isDict(meta.resolution) ? `${str(meta.resolution.integrity)}|${str(meta.resolution.tarball)}|${str(meta.resolution.commit)}` : '';
    const deps = depNames(e, ['dependencies', 'optionalDependencies']).flatMap(([dep, version]) => resolve(dep, version));
    entries.set(key, { name: pnpmName(key), fingerprint: `${key}|${resolution}`, deps });
  }
  const importers = new Map<string, Map<string, string>>();
  const importerDicts: [string, Dict][] = isDict(lock.importers)
    ? Object.entries(lock.importers).filter((e): e is [string, Dict] => isDict(e[1]))
    : [['.', lock]];
  for (const [dir, importer] of importerDicts) {
    const direct = new Map<string, string>();
    for (const field of ['dependencies', 'devDependencies', 'optionalDependencies']) {
      if (!isDict(importer[field])) continue;
      for (const [dep, spec] of Object.entries(importer[field])) {
        // v5: "1.0.0"; v6 and later: { specifier, version }.
        const version = isDict(spec) ? str(spec.version) : str(spec);
        for (const key of resolve(dep, version)) direct.set(dep, key);
      }
    }
    importers.set(dir, direct);
  }
  return { entries, importers };
}
