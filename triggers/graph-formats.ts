/**
 * Build graphs exported by the tools monorepos already run, read into
 * targets: Tandem's generic JSON, `nx graph --file=graph.json`,
 * `turbo run build --dry=json`, and `bazel query 'deps(//...)'
 * --output=streamed_jsonproto` (or `--output=jsonproto`). Each parser
 * validates what it uses and names the place of every problem; fields it
 * does not use are left alone, so newer versions of a tool still load.
 */
import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import type { BuildTarget } from './build-graph.js';

export type GraphFormat = 'json' | 'nx' | 'turbo' | 'bazel';

function parseJsonText(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`${source}: not JSON: ${(error as Error).message}`], 'build graph');
  }
}

/** `data` checked against `schema`; errors name `source` and the path, from `at` (the value's own place in the file) down. */
function check<T>(schema: z.ZodType<T>, data: unknown, source: string, at: readonly string[] = []): T {
  const parsed = schema.safeParse(data);
  if (!parsed.success)
    throw new ConfigError(
      parsed.error.issues.map((i) => `${source}: ${[...at, ...i.path.map(String)].join('.') || '(root)'}: ${i.message}`),
      'build graph',
    );
  return parsed.data;
}

const jsonGraph = z.strictObject({
  targets: z.array(z.strictObject({ name: z.string().min(1), srcs: z.array(z.string().min(1)).default([]), deps: z.array(z.string().min(1)).default([]) })),
});

const nxNode = z.object({ name: z.string().min(1).optional(), data: z.object({ root: z.string() }) });
const nxEdges = z.array(z.object({ source: z.string(), target: z.string().min(1), type: z.string().optional() }));
const nxShape = z.object({ graph: z.object({ nodes: z.record(z.string(), z.unknown()), dependencies: z.record(z.string(), z.unknown()).default({}) }) });

/**
 * The Nx graph's projects and edges, keyed by project names the repository chose: kept in Maps built from
 * the parsed JSON's own keys. A plain object (zod's record) would turn `__proto__` into a prototype, losing
 * the project and its edges, and answer `toString` with a function.
 */
function nxGraph(data: unknown, source: string): { nodes: Map<string, z.output<typeof nxNode>>; dependencies: Map<string, z.output<typeof nxEdges>> } {
  check(nxShape, data, source);
  const graph = (data as { graph: { nodes: object; dependencies?: object } }).graph;
  const entries = <T>(record: object | undefined, schema: z.ZodType<T>, field: string): Map<string, T> =>
    new Map(Object.entries(record ?? {}).map(([key, value]) => [key, check(schema, value, source, ['graph', field, key])] as const));
  return { nodes: entries(graph.nodes, nxNode, 'nodes'), dependencies: entries(graph.dependencies, nxEdges, 'dependencies') };
}

const turboDry = z.object({
  tasks: z.array(
    z.object({ taskId: z.string().min(1), package: z.string().min(1), directory: z.string().optional(), dependencies: z.array(z.string()).default([]) }),
  ),
});

const bazelTarget = z.object({
  type: z.string(),
  rule: z.object({ name: z.string().min(1), ruleInput: z.array(z.string()).default([]) }).optional(),
  generatedFile: z.object({ name: z.string(), generatingRule: z.string() }).optional(),
});

/** Parse a graph export of `format`; `source` names the file in errors. */
export function parseGraph(format: GraphFormat, text: string, source: string): BuildTarget[] {
  switch (format) {
    case 'json':
      return check(jsonGraph, parseJsonText(text, source), source).targets;
    case 'nx':
      return fromNx(nxGraph(parseJsonText(text, source), source));
    case 'turbo':
      return fromTurbo(check(turboDry, parseJsonText(text, source), source));
    case 'bazel':
      return fromBazel(text, source);
  }
}

/** Projects own their root; `npm:` targets are external packages (for lockfile narrowing); edge types label the path. */
function fromNx(graph: ReturnType<typeof nxGraph>): BuildTarget[] {
  const projects = new Set(graph.nodes.keys());
  return [...graph.nodes].map(([name, node]) => {
    const edges = graph.dependencies.get(name) ?? [];
    const deps = edges.filter((e) => projects.has(e.target) && e.target !== name);
    const depKinds: Record<string, string> = Object.assign(
      Object.create(null) as Record<string, string>,
      Object.fromEntries(deps.filter((e) => e.type !== undefined && e.type !== 'static').map((e) => [e.target, `nx ${e.type!}`])),
    );
    return {
      name,
      srcs: [node.data.root === '' || node.data.root === '.' ? '**' : node.data.root],
      deps: [...new Set(deps.map((e) => e.target))],
      ...(Object.keys(depKinds).length > 0 ? { depKinds } : {}),
      externalDeps: [...new Set(edges.filter((e) => e.target.startsWith('npm:')).map((e) => e.target.slice(4)))],
    };
  });
}

/** One target per package (its tasks' dependencies, across packages, are the edges); the root's `//` tasks are global. */
function fromTurbo(data: z.output<typeof turboDry>): BuildTarget[] {
  const packages = new Map<string, { dir: string; deps: Set<string> }>();
  for (const task of data.tasks) {
    if (task.package === '//') continue;
    const entry = packages.get(task.package) ?? { dir: task.directory ?? '', deps: new Set<string>() };
    for (const dep of task.dependencies) {
      const pkg = dep.slice(0, dep.lastIndexOf('#'));
      if (pkg !== '' && pkg !== task.package && pkg !== '//') entry.deps.add(pkg);
    }
    packages.set(task.package, entry);
  }
  return [...packages].map(([name, p]) => ({ name, srcs: [p.dir === '' || p.dir === '.' ? '**' : p.dir], deps: [...p.deps].filter((d) => packages.has(d)) }));
}

/** `//pkg/path:file.ts` → `pkg/path/file.ts`; undefined for labels outside the main repository. */
function labelPath(label: string): string | undefined {
  const m = /^\/\/([^:]*):(.+)$/.exec(label);
  if (!m) return undefined;
  return m[1] === '' ? m[2]! : `${m[1]}/${m[2]}`;
}

/**
 * Rules are targets. A rule's source-file inputs are its srcs, and so is its
 * package's BUILD file; inputs that are rules (or files they generate) are
 * edges; `@repo//…` inputs are external dependencies.
 */
function fromBazel(text: string, source: string): BuildTarget[] {
  let items: { data: unknown; where: string }[];
  let whole: unknown;
  try {
    whole = JSON.parse(text);
  } catch {
    whole = undefined; // streamed: one target per line
  }
  if (whole !== null && typeof whole === 'object' && 'target' in whole) {
    // --output=jsonproto: one object { "target": [...] }.
    const { target } = check(z.object({ target: z.array(z.unknown()) }), whole, source);
    items = target.map((data, i) => ({ data, where: `${source}: target[${i}]` }));
  } else {
    items = text
      .split('\n')
      .flatMap((line, i) => (line.trim() === '' ? [] : [{ data: parseJsonText(line, `${source}:${i + 1}`), where: `${source}:${i + 1}` }]));
  }
  const targets = items.map((item) => check(bazelTarget, item.data, item.where));
  const rules = new Set(targets.flatMap((t) => (t.rule ? [t.rule.name] : [])));
  const generatedBy = new Map(targets.flatMap((t) => (t.generatedFile ? [[t.generatedFile.name, t.generatedFile.generatingRule] as const] : [])));
  return targets.flatMap((t) => {
    if (!t.rule) return [];
    const name = t.rule.name;
    const pkg = name.slice(2, name.indexOf(':') === -1 ? undefined : name.indexOf(':'));
    const srcs = pkg === '' ? ['BUILD', 'BUILD.bazel'] : [`${pkg}/BUILD`, `${pkg}/BUILD.bazel`];
    const deps = new Set<string>();
    const externalDeps = new Set<string>();
    for (const input of t.rule.ruleInput) {
      if (input.startsWith('@')) externalDeps.add(input.slice(0, input.indexOf('//') === -1 ? undefined : input.indexOf('//')).replace(/^@+/, '@'));
      else if (rules.has(input)) deps.add(input);
      else if (generatedBy.has(input)) deps.add(generatedBy.get(input)!);
      else {
        const path = labelPath(input);
        if (path !== undefined) srcs.push(path);
      }
    }
    deps.delete(name);
    return [{ name, srcs, srcsAreFiles: true, deps: [...deps], externalDeps: [...externalDeps] }];
  });
}
