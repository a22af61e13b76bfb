/**
 * `npm run bench -- triggers`: a generated build graph of 100k targets and
 * ~1M dependency edges (layered, so the closure of a low-level change is
 * large, as in a real monorepo): index build time, and selection for a
 * 100-file change against two baselines measured in the same run, both
 * finding the changed files' owners the same way (the graph's owner lookup)
 * so that the closure itself is compared:
 *   - the strongest plain alternative: one multi-source BFS over a reverse
 *     adjacency list (a Map of name → dependents, built before timing);
 *   - the naive one: a separate BFS per changed file over the same list.
 */
import { seededRandom } from '../core/index.js';
import { BuildGraph, type BuildTarget } from '../triggers/index.js';
import { median } from './support/median.js';


/** Reverse adjacency: for each target, the targets that depend on it. */
function dependentsOf(targets: readonly BuildTarget[]): Map<string, string[]> {
  const dependents = new Map<string, string[]>();
  for (const t of targets) for (const dep of t.deps) (dependents.get(dep) ?? dependents.set(dep, []).get(dep)!).push(t.name);
  return dependents;
}

/** Every target reachable from `sources` through `dependents`, breadth first. */
function closure(sources: readonly string[], dependents: ReadonlyMap<string, readonly string[]>, seen = new Set<string>()): Set<string> {
  const queue = sources.filter((s) => !seen.has(s));
  for (const s of queue) seen.add(s);
  for (let head = 0; head < queue.length; head++) {
    for (const next of dependents.get(queue[head]!) ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  return seen;
}

function generate(targets: number, edgesPerTarget: number, seed: number): BuildTarget[] {
  const random = seededRandom(seed);
  return Array.from({ length: targets }, (_, i) => {
    const deps = new Set<string>();
    // Dependencies point to lower-numbered targets (a DAG), mostly nearby, some far: libraries used widely.
    for (let e = 0; e < edgesPerTarget && i > 0; e++) {
      const far = random() < 0.2;
      const j = far ? Math.floor(random() * i) : Math.max(0, i - 1 - Math.floor(random() * 200));
      deps.add(`//pkg${j}:lib`);
    }
    return { name: `//pkg${i}:lib`, srcs: [`pkg${i}/src/**/*.ts`, `pkg${i}/BUILD`], deps: [...deps] };
  });
}

export async function run(): Promise<void> {
  const targets = generate(100_000, 10, 7);
  const edges = targets.reduce((s, t) => s + t.deps.length, 0);
  let t0 = performance.now();
  const graph = new BuildGraph(targets);
  const buildMs = performance.now() - t0;
  const random = seededRandom(11);
  const changes = Array.from({ length: 7 }, () => Array.from({ length: 100 }, () => `pkg${Math.floor(random() * 100_000)}/src/module/file${Math.floor(random() * 50)}.ts`));
  const dependents = dependentsOf(targets);
  const fast: number[] = [];
  const multiSource: number[] = [];
  const perFile: number[] = [];
  let reached = 0;
  for (const change of changes) {
    t0 = performance.now();
    const result = graph.affected(change);
    fast.push(performance.now() - t0);
    reached = result.reached.size;
    t0 = performance.now();
    const oneBfs = closure(change.flatMap((file) => graph.owners(file)), dependents);
    multiSource.push(performance.now() - t0);
    t0 = performance.now();
    const all = new Set<string>();
    for (const file of change) for (const name of closure(graph.owners(file), dependents)) all.add(name);
    perFile.push(performance.now() - t0);
    if (oneBfs.size !== result.reached.size || all.size !== result.reached.size) throw new Error(`closures differ: ${result.reached.size} vs ${oneBfs.size} (one BFS) and ${all.size} (BFS per file)`);
  }
  const figures = {
    baseline: 'one multi-source BFS over a reverse adjacency list (Map), and a BFS per changed file, with the same owner lookup, in the same run',
    targets: targets.length,
    edges,
    indexBuildMs: Number(buildMs.toFixed(1)),
    changedFiles: 100,
    reachedTargetsLastChange: reached,
    selectionMsMedian: Number(median(fast).toFixed(2)),
    multiSourceBfsMsMedian: Number(median(multiSource).toFixed(2)),
    perFileBfsMsMedian: Number(median(perFile).toFixed(2)),
    speedupVsMultiSourceBfs: Number((median(multiSource) / median(fast)).toFixed(2)),
    speedupVsPerFileBfs: Number((median(perFile) / median(fast)).toFixed(1)),
  };
  process.stderr.write(`${targets.length} targets, ${edges} edges: index ${figures.indexBuildMs} ms; 100-file change: ${figures.selectionMsMedian} ms vs ${figures.multiSourceBfsMsMedian} ms (one BFS over a Map) and ${figures.perFileBfsMsMedian} ms (BFS per file), ${reached} targets reached\n`);
  process.stdout.write(`${JSON.stringify({ bench: 'triggers', figures, targets: { selectionMsMedian: { value: figures.selectionMsMedian, max: 100 }, speedupVsMultiSourceBfs: { value: figures.speedupVsMultiSourceBfs, min: 1 } } })}\n`);
}
