/**
 * Build graphs from what repositories already have: npm, yarn and pnpm
 * workspaces (each package owns its directory; dependencies on other
 * workspace packages are edges), or a generic JSON export (Bazel, Buck,
 * Pants: `{ "targets": [{ "name", "srcs": [globs], "deps": [names] }] }`).
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../core/index.js';
import { BuildGraph, type BuildTarget } from './build-graph.js';
import { globToRegExp } from './glob.js';

const jsonGraph = z.strictObject({
  targets: z.array(z.strictObject({ name: z.string().min(1), srcs: z.array(z.string().min(1)).default([]), deps: z.array(z.string().min(1)).default([]) })),
});

/** Parse a JSON graph export; every problem names its place in the file. */
export function parseJsonGraph(text: string, source: string): BuildTarget[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`${source}: not JSON: ${(error as Error).message}`], 'build graph');
  }
  const parsed = jsonGraph.safeParse(data);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => `${source}: ${i.path.join('.') || '(root)'}: ${i.message}`), 'build graph');
  return parsed.data.targets;
}

/**
 * A package.json: undefined when there is none; a file that exists but is not
 * a JSON object is a ConfigError naming it — dropping it silently would drop
 * its package from the graph and every change to it would select nothing.
 */
async function readJson(file: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new ConfigError([`${file}: cannot read: ${(error as Error).message}`], 'build graph');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`${file}: not valid JSON: ${(error as Error).message}`], 'build graph');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ConfigError([`${file}: not a JSON object`], 'build graph');
  return value as Record<string, unknown>;
}

/** Directories matching workspace patterns like `packages/*` or `apps/**` (node_modules never). */
async function expandWorkspaceGlobs(root: string, patterns: readonly string[]): Promise<string[]> {
  const include = patterns.filter((p) => !p.startsWith('!')).map((p) => globToRegExp(p.replace(/\/$/, '')));
  const exclude = patterns.filter((p) => p.startsWith('!')).map((p) => globToRegExp(p.slice(1).replace(/\/$/, '')));
  const found: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > 6) return;
    let entries;
    try {
      entries = await readdir(join(root, dir), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (include.some((r) => r.test(path)) && !exclude.some((r) => r.test(path))) found.push(path);
      await walk(path, depth + 1);
    }
  };
  await walk('', 0);
  return found.sort();
}

/** Targets of an npm/yarn/pnpm workspace rooted at `root`: one per package, named by its package name. */
export async function loadWorkspaces(root: string): Promise<BuildTarget[]> {
  const manifest = await readJson(join(root, 'package.json'));
  let patterns: string[] = [];
  const declared = manifest?.workspaces;
  if (Array.isArray(declared)) patterns = declared.map(String);
  else if (declared && typeof declared === 'object' && Array.isArray((declared as { packages?: unknown }).packages)) patterns = (declared as { packages: unknown[] }).packages.map(String);
  try {
    const pnpm = parseYaml(await readFile(join(root, 'pnpm-workspace.yaml'), 'utf8')) as { packages?: unknown } | null;
    if (Array.isArray(pnpm?.packages)) patterns.push(...pnpm.packages.map(String));
  } catch {
    // no pnpm workspace file
  }
  if (patterns.length === 0) throw new ConfigError([`${join(root, 'package.json')}: no "workspaces" (npm, yarn) and no pnpm-workspace.yaml: not a workspace root`], 'build graph');
  const packages: { name: string; dir: string; deps: string[] }[] = [];
  for (const dir of await expandWorkspaceGlobs(root, patterns)) {
    const file = join(root, dir, 'package.json');
    const pkg = await readJson(file);
    if (!pkg) continue; // a directory the pattern matches that holds no package
    if (typeof pkg.name !== 'string' || pkg.name === '') throw new ConfigError([`${file}: a workspace package needs a "name" (string)`], 'build graph');
    const deps = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'].flatMap((field) => Object.keys((pkg[field] as Record<string, string> | undefined) ?? {}));
    packages.push({ name: pkg.name, dir, deps });
  }
  const names = new Set(packages.map((p) => p.name));
  return packages.map((p) => ({ name: p.name, srcs: [p.dir], deps: [...new Set(p.deps.filter((d) => names.has(d) && d !== p.name))], externalDeps: [...new Set(p.deps.filter((d) => !names.has(d)))] }));
}

export type GraphSource = { readonly kind: 'workspaces'; readonly root?: string | undefined } | { readonly kind: 'json'; readonly file: string };

/** Load the configured build graph, relative to the repository root `cwd`. */
export async function loadBuildGraph(source: GraphSource, cwd: string): Promise<BuildGraph> {
  if (source.kind === 'workspaces') return new BuildGraph(await loadWorkspaces(resolve(cwd, source.root ?? '.')));
  const file = resolve(cwd, source.file);
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) throw new ConfigError([`triggers.graph.file: ${relative(cwd, file) || file} does not exist`], 'build graph');
  return new BuildGraph(parseJsonGraph(await readFile(file, 'utf8'), relative(cwd, file)));
}
