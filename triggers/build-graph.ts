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
  /** Reverse edges: for each target, the targets that depend on it. */
  readonly #dependents: number[][];
  /** Directory prefix → owners whose globs start there. */
  readonly #owners = new Map<string, Owner[]>();
  /** Dependencies naming no target, reported by `problems`. */
  readonly problems: string[] = [];

  constructor(targets: readonly BuildTarget[]) {
    this.names = targets.map((t) => t.name);
    targets.forEach((t, i) => {
      if (this.#index.has(t.name)) this.problems.push(`target ${t.name} is defined twice`);
      this.#index.set(t.name, i);
    });
    this.#dependents = targets.map(() => []);
    targets.forEach((t, i) => {
      for (const dep of t.deps) {
        const j = this.#index.get(dep);
        if (j === undefined) this.problems.push(`target ${t.name} depends on unknown target ${dep}`);
        else this.#dependents[j]!.push(i);
      }
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
  affected(changedFiles: readonly string[]): { reached: Map<string, Reach>; unowned: string[] } {
    const parent = new Int32Array(this.names.length).fill(-2); // -2 unseen, -1 reached from a file
    const fileOf = new Map<number, string>();
    const queue: number[] = [];
    const unowned: string[] = [];
    for (const file of changedFiles) {
      const owners = this.owners(file);
      if (owners.length === 0) unowned.push(file);
      for (const owner of owners) {
        const i = this.#index.get(owner)!;
        if (parent[i] !== -2) continue;
        parent[i] = -1;
        fileOf.set(i, file);
        queue.push(i);
      }
    }
    for (let head = 0; head < queue.length; head++) {
      const i = queue[head]!;
      for (const j of this.#dependents[i]!) {
        if (parent[j] !== -2) continue;
        parent[j] = i;
        queue.push(j);
      }
    }
    const reached = new Map<string, Reach>();
    const pathTo = (i: number): string[] => {
      const chain: string[] = [];
      let k = i;
      while (parent[k] !== -1) {
        chain.push(this.names[k]!);
        k = parent[k]!;
      }
      chain.push(this.names[k]!, fileOf.get(k)!);
      return chain.reverse();
    };
    for (const i of queue) reached.set(this.names[i]!, { target: this.names[i]!, get path() { return pathTo(i); } });
    return { reached, unowned };
  }

  /** Reverse closure by a separate BFS per changed file: the naive baseline the benchmark compares with. */
  affectedNaive(changedFiles: readonly string[]): Set<string> {
    const all = new Set<string>();
    for (const file of changedFiles) {
      const seen = new Set<number>();
      const queue = this.owners(file).map((o) => this.#index.get(o)!);
      for (const i of queue) seen.add(i);
      for (let head = 0; head < queue.length; head++) {
        for (const j of this.#dependents[queue[head]!]!) {
          if (seen.has(j)) continue;
          seen.add(j);
          queue.push(j);
        }
      }
      for (const i of seen) all.add(this.names[i]!);
    }
    return all;
  }
}
