/**
 * `npm run bench -- triggers`: a generated build graph of 100k targets and
 * ~1M dependency edges (layered, so the closure of a low-level change is
 * large, as in a real monorepo): index build time, and selection for a
 * 100-file change with one BFS from all changed files against the naive
 * baseline of a separate BFS per changed file, measured in the same run.
 */
import { seededRandom } from '../core/index.js';
import { BuildGraph, type BuildTarget } from '../triggers/index.js';
import { median } from './support/median.js';


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
  const fast: number[] = [];
  const naive: number[] = [];
  let reached = 0;
  for (const change of changes) {
    t0 = performance.now();
    const result = graph.affected(change);
    fast.push(performance.now() - t0);
    reached = result.reached.size;
    t0 = performance.now();
    const baseline = graph.affectedNaive(change);
    naive.push(performance.now() - t0);
    if (baseline.size !== result.reached.size) throw new Error(`closures differ: ${baseline.size} vs ${result.reached.size}`);
  }
  const figures = {
    targets: targets.length,
    edges,
    indexBuildMs: Number(buildMs.toFixed(1)),
    changedFiles: 100,
    reachedTargetsLastChange: reached,
    selectionMsMedian: Number(median(fast).toFixed(2)),
    naivePerFileBfsMsMedian: Number(median(naive).toFixed(2)),
    speedupVsNaive: Number((median(naive) / median(fast)).toFixed(1)),
  };
  process.stderr.write(`${targets.length} targets, ${edges} edges: index ${figures.indexBuildMs} ms; 100-file change: ${figures.selectionMsMedian} ms (one BFS) vs ${figures.naivePerFileBfsMsMedian} ms (BFS per file), ${reached} targets reached\n`);
  process.stdout.write(`${JSON.stringify({ bench: 'triggers', figures, targets: { selectionMsMedian: { value: figures.selectionMsMedian, max: 100 } } })}\n`);
}
