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
}

interface Owner {
  readonly target: number;
  readonly pattern: RegExp;
}

/** How a target was reached: from a changed file directly, or from the target it depends on. */
export interface Reach {
  readonly target: string;
  /** Changed file → owning target → … → this target. */
  readonly path: readonly string[];
}

export class BuildGraph {
  readonly names: readonly string[];
  readonly #index = new Map<string, number>();
  /** Reverse edges in compressed form: the dependents of target i are #edges[#offsets[i] .. #offsets[i + 1]). */
  readonly #offsets: Int32Array;
  readonly #edges: Int32Array;
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
    for (const t of targets) for (const dep of t.externalDeps ?? []) this.#usersOf.set(dep, [...(this.#usersOf.get(dep) ?? []), t.name]);
    targets.forEach((t, i) => {
      if (this.#index.has(t.name)) this.problems.push(`target ${t.name} is defined twice`);
      this.#index.set(t.name, i);
    });
    const counts = new Int32Array(targets.length + 1);
    const resolved = targets.map((t) =>
      t.deps.flatMap((dep) => {
        const j = this.#index.get(dep);
        if (j === undefined) {
          this.problems.push(`target ${t.name} depends on unknown target ${dep}`);
          return [];
        }
        counts[j + 1]!++;
        return [j];
      }),
    );
    for (let i = 1; i <= targets.length; i++) counts[i]! += counts[i - 1]!;
    this.#offsets = counts;
    this.#edges = new Int32Array(counts[targets.length]!);
    const fill = counts.slice(0, targets.length);
    resolved.forEach((deps, i) => {
      for (const j of deps) this.#edges[fill[j]!++] = i;
    });
    targets.forEach((t, i) => {
      for (const src of t.srcs) {
        // A bare directory owns everything below it.
        const glob = /[*?{]/.test(src) || /\.[A-Za-z0-9]+$/.test(src) ? src : `${src.replace(/\/$/, '')}/**`;
        const prefix = staticPrefix(glob);
        const list = this.#owners.get(prefix) ?? [];
        list.push({ target: i, pattern: globToRegExp(glob) });
        this.#owners.set(prefix, list);
      }
    });
  }

  get size(): number {
    return this.names.length;
  }

  has(target: string): boolean {
    return this.#index.has(target);
  }

  /** Targets owning `file`; the deepest directory prefix wins, as in Bazel's package boundaries. */
  owners(file: string): string[] {
    const parts = file.split('/');
    for (let depth = parts.length; depth >= 0; depth--) {
      const prefix = parts.slice(0, depth).join('/');
      const candidates = this.#owners.get(prefix);
      if (!candidates) continue;
      const matched = candidates.filter((o) => o.pattern.test(file)).map((o) => this.names[o.target]!);
      if (matched.length > 0) return [...new Set(matched)];
    }
    return [];
  }

  /**
   * Every target a change reaches (owners of changed files and all their dependents),
   * each with a shortest path from a changed file. Files owned by no target are returned apart.
   */
  /** Targets depending directly on any of these external packages. */
  usersOf(packages: Iterable<string>): string[] {
    return [...new Set([...packages].flatMap((p) => this.#usersOf.get(p) ?? []))];
  }

  /** `seeds`: targets changed by something other than their own files (e.g. a dependency in the lockfile), labelled for the path. */
  affected(changedFiles: readonly string[], seeds: readonly { target: string; cause: string }[] = []): { reached: Reached; unowned: string[] } {
    const parent = new Int32Array(this.names.length).fill(-2); // -2 unseen, -1 reached from a file
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
        queue[tail++] = j;
      }
    }
    return { reached: new Reached(this.names, this.#index, parent, queue.subarray(0, tail), fileOf), unowned };
  }
}

/** The targets a change reached; paths are built only for the targets asked about. */
export class Reached {
  readonly #names: readonly string[];
  readonly #index: ReadonlyMap<string, number>;
  readonly #parent: Int32Array;
  readonly #order: Int32Array;
  readonly #fileOf: ReadonlyMap<number, string>;

  constructor(names: readonly string[], index: ReadonlyMap<string, number>, parent: Int32Array, order: Int32Array, fileOf: ReadonlyMap<number, string>) {
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
    let k = i;
    while (this.#parent[k] !== -1) {
      chain.push(this.#names[k]!);
      k = this.#parent[k]!;
    }
    chain.push(this.#names[k]!, this.#fileOf.get(k)!);
    return { target, path: chain.reverse() };
  }

  *keys(): IterableIterator<string> {
    for (const i of this.#order) yield this.#names[i]!;
  }

  *values(): IterableIterator<Reach> {
    for (const name of this.keys()) yield this.get(name)!;
  }
}
