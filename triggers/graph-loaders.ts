/**
 * The build graph of a change, read at both of its ends without a checkout
 * (`git ls-tree` and `git cat-file`), and the union of the two: a change
 * that adds or removes a dependency selects the same from any checkout.
 * Sources: npm, yarn and pnpm workspaces (each package owns its directory;
 * dependencies on other workspace packages are edges, labelled by the field
 * that declares them), or an export of Nx, Turborepo, Bazel or Tandem's
 * generic JSON. An export that is not committed at either end (generated in
 * CI) is read from the working tree, and the selection says so.
 */
import { readFile } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../core/errors.js';
import { BuildGraph, unionTargets, type BuildTarget } from './build-graph.js';
import { parseGraph, type GraphFormat } from './graph-formats.js';
import { globToRegExp } from './glob.js';
import { RevisionFiles } from './revision-files.js';

export type GraphSource = { readonly kind: 'workspaces'; readonly root?: string | undefined } | { readonly kind: GraphFormat; readonly file: string };

/** The files of one end of a change (a revision), as the loaders read them. */
export interface GraphFiles {
  readonly revision: string;
  paths(): Iterable<string>;
  read(paths: readonly string[]): Promise<Map<string, string>>;
  readOne(path: string): Promise<string | undefined>;
}

function parseJsonObject(text: string, file: string, at: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`${file} at ${at}: not valid JSON: ${(error as Error).message}`], 'build graph');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ConfigError([`${file} at ${at}: not a JSON object`], 'build graph');
  return value as Record<string, unknown>;
}

const FIELDS = [
  ['dependencies', 'dependency'],
  ['optionalDependencies', 'optionalDependency'],
  ['peerDependencies', 'peerDependency'],
  ['devDependencies', 'devDependency'],
] as const;

/** Targets of the npm/yarn/pnpm workspace rooted at `root` ("" for the repository root) at one revision. */
export async function loadWorkspaces(files: GraphFiles, root: string): Promise<BuildTarget[]> {
  const at = (path: string): string => (root === '' ? path : `${root}/${path}`);
  const manifestText = await files.readOne(at('package.json'));
  const manifest = manifestText === undefined ? undefined : parseJsonObject(manifestText, at('package.json'), files.revision);
  let patterns: string[] = [];
  const declared = manifest?.workspaces;
  if (Array.isArray(declared)) patterns = declared.map(String);
  else if (declared && typeof declared === 'object' && Array.isArray((declared as { packages?: unknown }).packages))
    patterns = (declared as { packages: unknown[] }).packages.map(String);
  const pnpmText = await files.readOne(at('pnpm-workspace.yaml'));
  if (pnpmText !== undefined) {
    let pnpm: unknown;
    try {
      pnpm = parseYaml(pnpmText);
    } catch (error) {
      throw new ConfigError([`${at('pnpm-workspace.yaml')} at ${files.revision}: not valid YAML: ${(error as Error).message.split('\n')[0]}`], 'build graph');
    }
    const list = (pnpm as { packages?: unknown } | null)?.packages;
    if (Array.isArray(list)) patterns.push(...list.map(String));
  }
  if (patterns.length === 0)
    throw new ConfigError(
      [`${at('package.json')} at ${files.revision}: no "workspaces" (npm, yarn) and no pnpm-workspace.yaml: not a workspace root`],
      'build graph',
    );
  const include = patterns.filter((p) => !p.startsWith('!')).map((p) => globToRegExp(p.replace(/^\.\//, '').replace(/\/$/, '')));
  const exclude = patterns.filter((p) => p.startsWith('!')).map((p) => globToRegExp(p.slice(1).replace(/^\.\//, '').replace(/\/$/, '')));
  const prefix = root === '' ? '' : `${root}/`;
  const manifests: string[] = [];
  for (const path of files.paths()) {
    if (!path.endsWith('/package.json') || !path.startsWith(prefix)) continue;
    const dir = path.slice(prefix.length, -'/package.json'.length);
    if (dir.split('/').some((segment) => segment === 'node_modules' || segment.startsWith('.'))) continue;
    if (include.some((r) => r.test(dir)) && !exclude.some((r) => r.test(dir))) manifests.push(path);
  }
  const texts = await files.read(manifests);
  const packages = manifests.sort().map((file) => {
    const pkg = parseJsonObject(texts.get(file)!, file, files.revision);
    if (typeof pkg.name !== 'string' || pkg.name === '')
      throw new ConfigError([`${file} at ${files.revision}: a workspace package needs a "name" (string)`], 'build graph');
    // The first field naming a dependency decides its kind: a plain dependency outranks a dev one.
    const kinds = new Map<string, string>();
    for (const [field, kind] of FIELDS) {
      const deps = pkg[field];
      if (deps && typeof deps === 'object' && !Array.isArray(deps)) for (const dep of Object.keys(deps)) if (!kinds.has(dep)) kinds.set(dep, kind);
    }
    return { name: pkg.name, dir: file.slice(0, -'/package.json'.length), kinds };
  });
  const names = new Set(packages.map((p) => p.name));
  return packages.map((p) => {
    const internal = [...p.kinds].filter(([d]) => names.has(d) && d !== p.name);
    const depKinds = Object.fromEntries(internal.filter(([, k]) => k !== 'dependency'));
    return {
      name: p.name,
      srcs: [p.dir],
      deps: internal.map(([d]) => d),
      ...(Object.keys(depKinds).length > 0 ? { depKinds } : {}),
      externalDeps: [...p.kinds.keys()].filter((d) => !names.has(d)),
    };
  });
}

export interface LoadedGraph {
  readonly graph: BuildGraph;
  /** The export file, a global input by definition (undefined for workspaces). */
  readonly file?: string;
  /** What a reader of the selection should know about how the graph was read. */
  readonly notes: readonly string[];
}

/** The build graph of `source` at `base` and at `head`, united. */
export async function loadGraphAtBothEnds(source: GraphSource, repo: string, base: string, head: string): Promise<LoadedGraph> {
  const cache = new Map<string, Promise<string>>();
  // One revision at both ends (`run` expanding templates at HEAD) is listed once.
  const [atBase, atHead] =
    head === base
      ? await RevisionFiles.open(repo, base, cache).then((one): [RevisionFiles, RevisionFiles] => [one, one])
      : await Promise.all([RevisionFiles.open(repo, base, cache), RevisionFiles.open(repo, head, cache)]);
  if (source.kind === 'workspaces') {
    const root = relative(repo, resolve(repo, source.root ?? '.'))
      .split('\\')
      .join('/');
    const ends = await Promise.all([atBase, atHead].map((files) => loadWorkspaces(files, root).catch((error: unknown) => error as Error)));
    // A manifest that does not parse is the repository's error, at whichever end: selecting through the other
    // end's graph could miss what the change reaches (exit 3, naming the file and the revision).
    const unreadable = ends.find((e): e is ConfigError => e instanceof ConfigError);
    if (unreadable) throw unreadable;
    // A workspace that exists at one end only (introduced or removed by the change) is read from that end.
    const loaded = ends.filter((e): e is BuildTarget[] => !(e instanceof Error));
    if (loaded.length === 0) throw ends[1] as Error;
    return {
      graph: new BuildGraph(loaded.length === 2 ? unionTargets(loaded[0]!, loaded[1]!) : loaded[0]!),
      notes: loaded.length === 2 ? [] : [`the workspace is readable at one end of the change only: ${(ends.find((e) => e instanceof Error) as Error).message}`],
    };
  }
  const file = relative(repo, resolve(repo, source.file)).split('\\').join('/');
  const [before, after] = await Promise.all([atBase.readOne(file), atHead.readOne(file)]);
  if (before === undefined && after === undefined) {
    let text: string;
    try {
      text = await readFile(resolve(repo, file), 'utf8');
    } catch {
      throw new ConfigError([`triggers.graph.file: ${file} is neither committed at base or head nor present in the working tree`], 'build graph');
    }
    return {
      graph: new BuildGraph(parseGraph(source.kind, text, file)),
      file,
      notes: [`${file} is not committed at base or head: read from the working tree (generate it at the head of the change)`],
    };
  }
  const targets = [before, after].flatMap((text, i) => (text === undefined ? [] : [parseGraph(source.kind, text, `${file} at ${i === 0 ? 'base' : 'head'}`)]));
  return { graph: new BuildGraph(targets.length === 2 ? unionTargets(targets[0]!, targets[1]!) : targets[0]!), file, notes: [] };
}
