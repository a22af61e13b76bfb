/**
 * The build graph: targets, the files they own, and their dependencies.
 * Indexed once: file ownership through the static directory prefix of each
 * target's source globs (a lookup walks the file's parent directories, not
 * every target), and reverse dependency edges for the closure. A change
 * reaches every target that owns a changed file *plus every dependent*,
 * found by one breadth-first search from all changed files at once, with the
 * parent of each reached target kept so the shortest path can be shown.
 */
import { globToRegExp, staticPrefix } from './glob.js';

export interface BuildTarget {
  readonly name: string;
  /** Globs (or directories, meaning everything below) of the files the target owns. */
  readonly srcs: readonly string[];
  /** Targets this one depends on. */
  readonly deps: readonly string[];
  /** External packages it depends on (workspaces), for narrowing lockfile changes. */
  readonly externalDeps?: readonly string[];
  /** Dependency → the kind of its edge when it is not a plain dependency (e.g. "devDependency"), shown in paths. */
  readonly depKinds?: Readonly<Record<string, string>>;
  /** `srcs` are exact file paths (Bazel), not globs or directories. */
  readonly srcsAreFiles?: boolean;
}

/** The plain edge kind: a dependency the target cannot run without. */
export const DEPENDENCY = 'dependency';

/** The kind of an edge to `dep`: an own key only (target names come from the repository: `toString`, `__proto__`). */
function kindOf(kinds: Readonly<Record<string, string>> | undefined, dep: string): string | undefined {
  return kinds !== undefined && Object.hasOwn(kinds, dep) ? kinds[dep] : undefined;
}

/**
 * One graph from two (the build graph at a change's base and at its head):
 * every target of either, owning the files it owns at either end, with the
 * union of their edges. An edge that is a plain dependency at one end is a
 * plain dependency.
 */
export function unionTargets(a: readonly BuildTarget[], b: readonly BuildTarget[]): BuildTarget[] {
  const merged = new Map<string, BuildTarget>(a.map((t) => [t.name, t]));
  for (const t of b) {
    const m = merged.get(t.name);
    if (!m) {
      merged.set(t.name, t);
      continue;
    }
    const deps = [...new Set([...m.deps, ...t.deps])];
    const kinds = Object.create(null) as Record<string, string>;
    for (const dep of deps) {
      const ka = m.deps.includes(dep) ? (kindOf(m.depKinds, dep) ?? DEPENDENCY) : undefined;
      const kb = t.deps.includes(dep) ? (kindOf(t.depKinds, dep) ?? DEPENDENCY) : undefined;
      const kind = ka === DEPENDENCY || kb === DEPENDENCY ? DEPENDENCY : (ka ?? kb)!;
      if (kind !== DEPENDENCY) kinds[dep] = kind;
    }
    const external = m.externalDeps || t.externalDeps ? { externalDeps: [...new Set([...(m.externalDeps ?? []), ...(t.externalDeps ?? [])])] } : {};
    merged.set(t.name, {
      name: t.name,
      srcs: [...new Set([...m.srcs, ...t.srcs])],
      deps,
      ...(Object.keys(kinds).length > 0 ? { depKinds: kinds } : {}),
      ...external,
      ...(m.srcsAreFiles && t.srcsAreFiles ? { srcsAreFiles: true } : {}),
    });
  }
  return [...merged.values()];
}

interface Owner {
  readonly target: number;
  /** Matched against the path relative to `root` ("" for the root itself): globs sharing a shape share one. */
  readonly pattern: RegExp;
  /** The static directory the owning glob starts at: the target's root for its input sets. */
  readonly root: string;
}

/** The pattern of a source that is its own static prefix (an exact path): matches the prefix itself. */
const EXACT = /^$/;

/** A target owning a file, and the root the file is relative to for input sets. */
export interface Ownership {
  readonly target: string;
  readonly root: string;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** How a target was reached: from a changed file directly, or from the target it depends on. */
export interface Reach {
  readonly target: string;
  /** Changed file → owning target → … → this target. */
  readonly path: readonly string[];
  /** The kind of each edge between consecutive targets of the path (one fewer than its targets). */
  readonly edges: readonly string[];
}

export class BuildGraph {
  readonly names: readonly string[];
  readonly #index = new Map<string, number>();
  /** Reverse edges in compressed form: the dependents of target i are #edges[#offsets[i] .. #offsets[i + 1]). */
  readonly #offsets: Int32Array;
  readonly #edges: Int32Array;
  /** Index into #edgeKinds of each edge's kind. */
  readonly #edgeKind: Uint16Array;
  readonly #edgeKinds: string[] = [DEPENDENCY];
  /** Directory prefix → owners whose globs start there. */
  readonly #owners = new Map<string, Owner[]>();
  /** Dependencies naming no target, reported by `problems`. */
  readonly problems: string[] = [];
  /** External package → targets depending on it directly. */
  readonly #usersOf = new Map<string, string[]>();
  /** Whether any target declared its external dependencies (a lockfile change can then be narrowed). */
  readonly knowsExternalDeps: boolean;

  constructor(targets: readonly BuildTarget[]) {
    this.names = targets.map((t) => t.name);
    this.knowsExternalDeps = targets.some((t) => t.externalDeps !== undefined);
    for (const t of targets) for (const dep of t.externalDeps ?? []) (this.#usersOf.get(dep) ?? this.#usersOf.set(dep, []).get(dep)!).push(t.name);
    targets.forEach((t, i) => {
      if (this.#index.has(t.name)) this.problems.push(`target ${t.name} is defined twice`);
      this.#index.set(t.name, i);
    });
    const counts = new Int32Array(targets.length + 1);
    const kindIndex = (kind: string | undefined): number => {
      if (kind === undefined) return 0;
      const k = this.#edgeKinds.indexOf(kind);
      return k !== -1 ? k : this.#edgeKinds.push(kind) - 1;
    };
    const resolved = targets.map((t) =>
      t.deps.flatMap((dep) => {
        const j = this.#index.get(dep);
        if (j === undefined) {
          this.problems.push(`target ${t.name} depends on unknown target ${dep}`);
          return [];
        }
        counts[j + 1]!++;
        return [[j, kindIndex(kindOf(t.depKinds, dep))] as const];
      }),
    );
    for (let i = 1; i <= targets.length; i++) counts[i]! += counts[i - 1]!;
    this.#offsets = counts;
    this.#edges = new Int32Array(counts[targets.length]!);
    this.#edgeKind = new Uint16Array(counts[targets.length]!);
    const fill = counts.slice(0, targets.length);
    resolved.forEach((deps, i) => {
      for (const [j, kind] of deps) {
        this.#edgeKind[fill[j]!] = kind;
        this.#edges[fill[j]!++] = i;
      }
    });
    // Compiled by shape relative to the prefix: 100k targets with `pkgN/src/**\/*.ts` compile `**\/*.ts` once.
    const compiled = new Map<string, RegExp>();
    targets.forEach((t, i) => {
      for (const src of t.srcs) {
        if (t.srcsAreFiles) {
          const dir = src.includes('/') ? src.slice(0, src.lastIndexOf('/')) : '';
          this.#addOwner(dir, { target: i, pattern: new RegExp(`^${escapeRegExp(dir === '' ? src : src.slice(dir.length + 1))}$`), root: dir });
          continue;
        }
        // A bare directory (or "**", everything) owns everything below it.
        const glob = src === '**' ? src : /[*?{]/.test(src) || /\.[A-Za-z0-9]+$/.test(src) ? src : `${src.replace(/\/$/, '')}/**`;
        const prefix = staticPrefix(glob);
        const rest = prefix === glob ? '' : prefix === '' ? glob : glob.slice(prefix.length + 1);
        let pattern = rest === '' ? EXACT : compiled.get(rest);
        if (!pattern) compiled.set(rest, (pattern = globToRegExp(rest)));
        this.#addOwner(prefix, { target: i, pattern, root: prefix });
      }
    });
  }

  #addOwner(prefix: string, owner: Owner): void {
    const list = this.#owners.get(prefix) ?? [];
    list.push(owner);
    this.#owners.set(prefix, list);
  }

  /** Each target with its root (the static directory of its first source), for templates and input sets. */
  targets(): { name: string; dir: string }[] {
    const dirs = new Map<number, string>();
    for (const list of this.#owners.values())
      for (const o of list) if (!dirs.has(o.target) || o.root.length < dirs.get(o.target)!.length) dirs.set(o.target, o.root);
    return this.names.map((name, i) => ({ name, dir: dirs.get(i) ?? '' }));
  }

  get size(): number {
    return this.names.length;
  }

  has(target: string): boolean {
    return this.#index.has(target);
  }

  /** Targets owning `file`; the deepest directory prefix wins, as in Bazel's package boundaries. */
  owners(file: string): string[] {
    return [...new Set(this.ownersOf(file).map((o) => o.target))];
  }

  /** Like `owners`, with the root each owning glob starts at. */
  ownersOf(file: string): Ownership[] {
    const parts = file.split('/');
    for (let depth = parts.length; depth >= 0; depth--) {
      const prefix = parts.slice(0, depth).join('/');
      const candidates = this.#owners.get(prefix);
      if (!candidates) continue;
      const relative = prefix === '' ? file : depth === parts.length ? '' : file.slice(prefix.length + 1);
      const matched = candidates.filter((o) => o.pattern.test(relative)).map((o) => ({ target: this.names[o.target]!, root: o.root }));
      if (matched.length > 0) return matched;
    }
    return [];
  }

  /** Targets depending directly on any of these external packages. */
  usersOf(packages: Iterable<string>): string[] {
    return [...new Set([...packages].flatMap((p) => this.#usersOf.get(p) ?? []))];
  }

  /**
   * Every target a change reaches (owners of changed files and all their dependents),
   * each with a shortest path from a changed file. Files owned by no target are returned apart.
   * `seeds`: targets changed by something other than their own files (e.g. a dependency in the lockfile), labelled for the path.
   */
  affected(changedFiles: readonly string[], seeds: readonly { target: string; cause: string }[] = []): { reached: Reached; unowned: string[] } {
    const parent = new Int32Array(this.names.length).fill(-2); // -2 unseen, -1 reached from a file
    const parentEdge = new Int32Array(this.names.length);
    const fileOf = new Map<number, string>();
    const queue = new Int32Array(this.names.length);
    let tail = 0;
    const unowned: string[] = [];
    for (const file of changedFiles) {
      const owners = this.owners(file);
      if (owners.length === 0) unowned.push(file);
      for (const owner of owners) {
        const i = this.#index.get(owner)!;
        if (parent[i] !== -2) continue;
        parent[i] = -1;
        fileOf.set(i, file);
        queue[tail++] = i;
      }
    }
    for (const { target, cause } of seeds) {
      const i = this.#index.get(target);
      if (i === undefined || parent[i] !== -2) continue;
      parent[i] = -1;
      fileOf.set(i, cause);
      queue[tail++] = i;
    }
    const offsets = this.#offsets;
    const edges = this.#edges;
    for (let head = 0; head < tail; head++) {
      const i = queue[head]!;
      for (let e = offsets[i]!; e < offsets[i + 1]!; e++) {
        const j = edges[e]!;
        if (parent[j] !== -2) continue;
        parent[j] = i;
        parentEdge[j] = e;
        queue[tail++] = j;
      }
    }
    const kinds = this.#edgeKinds;
    const edgeKind = this.#edgeKind;
    const kindOf = (i: number): string => kinds[edgeKind[parentEdge[i]!]!]!;
    return { reached: new Reached(this.names, this.#index, parent, queue.subarray(0, tail), fileOf, kindOf), unowned };
  }
}

/** The targets a change reached; paths are built only for the targets asked about. */
export class Reached {
  readonly #names: readonly string[];
  readonly #index: ReadonlyMap<string, number>;
  readonly #parent: Int32Array;
  readonly #order: Int32Array;
  readonly #fileOf: ReadonlyMap<number, string>;
  readonly #kindOf: (target: number) => string;

  constructor(
    names: readonly string[],
    index: ReadonlyMap<string, number>,
    parent: Int32Array,
    order: Int32Array,
    fileOf: ReadonlyMap<number, string>,
    kindOf: (target: number) => string,
  ) {
    this.#kindOf = kindOf;
    this.#names = names;
    this.#index = index;
    this.#parent = parent;
    this.#order = order;
    this.#fileOf = fileOf;
  }

  get size(): number {
    return this.#order.length;
  }

  has(target: string): boolean {
    const i = this.#index.get(target);
    return i !== undefined && this.#parent[i] !== -2;
  }

  /** The target with a shortest path from a changed file to it, or undefined when the change does not reach it. */
  get(target: string): Reach | undefined {
    const i = this.#index.get(target);
    if (i === undefined || this.#parent[i] === -2) return undefined;
    const chain: string[] = [];
    const edges: string[] = [];
    let k = i;
    while (this.#parent[k] !== -1) {
      chain.push(this.#names[k]!);
      edges.push(this.#kindOf(k));
      k = this.#parent[k]!;
    }
    chain.push(this.#names[k]!, this.#fileOf.get(k)!);
    return { target, path: chain.reverse(), edges: edges.reverse() };
  }

  *keys(): IterableIterator<string> {
    for (const i of this.#order) yield this.#names[i]!;
  }

  *values(): IterableIterator<Reach> {
    for (const name of this.keys()) yield this.get(name)!;
  }
}
