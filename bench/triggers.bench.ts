/**
 * `npm run bench -- triggers`, three parts:
 *   1. A generated build graph of 100k targets and ~1M dependency edges
 *      (layered, so the closure of a low-level change is large), at two ends
 *      of a change and united: `selectMs100k` is full selection (input sets,
 *      owners, closure, reasons for 1,000 workloads) of a 100-file change.
 *      The closure alone is compared, in the same run and with the same owner
 *      lookup, with one multi-source BFS over a reverse adjacency list (a Map
 *      built before timing) and with a BFS per changed file.
 *   2. `readBothEndsMs`: a 1,000-package workspace graph read at two
 *      revisions (support/both-ends-read.ts).
 *   3. `selectedVsReachable` over generated histories with all three
 *      lockfile kinds, today's behaviour beside it (support/selection-history.ts).
 * `--quick` runs fewer history commits (a smoke run, not the figures).
 */
import { parseConfig, seededRandom } from '../core/index.js';
import { BuildGraph, selectWorkloads, unionTargets, type BuildTarget } from '../triggers/index.js';
import { readBothEndsFigures } from './support/both-ends-read.js';
import { median } from './support/median.js';
import { selectionHistoryFigures } from './support/selection-history.js';

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

/** The head end of a change: 1,000 targets gain a dependency, 100 are added. */
function headOf(base: readonly BuildTarget[], seed: number): BuildTarget[] {
  const random = seededRandom(seed);
  const head = base.map((t) => ({ ...t, deps: [...t.deps] }));
  for (let k = 0; k < 1000; k++) {
    const i = 1 + Math.floor(random() * (head.length - 1));
    head[i]!.deps.push(`//pkg${Math.floor(random() * i)}:lib`);
  }
  for (let k = 0; k < 100; k++) head.push({ name: `//new${k}:lib`, srcs: [`new${k}/src/**/*.ts`], deps: [`//pkg${Math.floor(random() * base.length)}:lib`] });
  return head;
}

async function selectionFigures(): Promise<Record<string, number>> {
  const base = generate(100_000, 10, 7);
  const edges = base.reduce((s, t) => s + t.deps.length, 0);
  let t0 = performance.now();
  const targets = unionTargets(base, headOf(base, 8));
  const graph = new BuildGraph(targets);
  const buildMs = performance.now() - t0;
  const random = seededRandom(11);
  const pkg = (): number => Math.floor(random() * 100_000);
  // 100 files: 60 sources, and tests, READMEs and snapshots that the default input sets ignore.
  const changes = Array.from({ length: 7 }, () => [
    ...Array.from({ length: 60 }, () => `pkg${pkg()}/src/module/file${Math.floor(random() * 50)}.ts`),
    ...Array.from({ length: 20 }, () => `pkg${pkg()}/src/module/file${Math.floor(random() * 50)}.test.ts`),
    ...Array.from({ length: 10 }, () => `pkg${pkg()}/src/README.md`),
    ...Array.from({ length: 10 }, () => `pkg${pkg()}/src/__snapshots__/file.test.ts.snap`),
  ]);
  const config = parseConfig({
    workloads: Array.from({ length: 1000 }, (_, i) => ({ name: `w${i}`, tier: `t${i}`, triggers: { targets: [`//pkg${i * 100 + 99}:lib`] } })),
  });
  const dependents = dependentsOf(targets);
  const fast: number[] = [];
  const select: number[] = [];
  const multiSource: number[] = [];
  const perFile: number[] = [];
  let reached = 0;
  let selected = 0;
  for (const change of changes) {
    t0 = performance.now();
    const selection = selectWorkloads({ config, graph, changedFiles: change, change: 'bench' });
    select.push(performance.now() - t0);
    selected = selection.selected.length;
    if (selection.ignoredFiles.length !== 40) throw new Error(`expected the 40 tests, READMEs and snapshots ignored, got ${selection.ignoredFiles.length}`);
    const sources = change.slice(0, 60);
    t0 = performance.now();
    const result = graph.affected(sources);
    fast.push(performance.now() - t0);
    reached = result.reached.size;
    t0 = performance.now();
    const oneBfs = closure(
      sources.flatMap((file) => graph.owners(file)),
      dependents,
    );
    multiSource.push(performance.now() - t0);
    t0 = performance.now();
    const all = new Set<string>();
    for (const file of sources) for (const name of closure(graph.owners(file), dependents)) all.add(name);
    perFile.push(performance.now() - t0);
    if (oneBfs.size !== result.reached.size || all.size !== result.reached.size)
      throw new Error(`closures differ: ${result.reached.size} vs ${oneBfs.size} (one BFS) and ${all.size} (BFS per file)`);
  }
  const figures = {
    targets: targets.length,
    edges,
    unionIndexBuildMs: Number(buildMs.toFixed(1)),
    selectMs100k: Number(median(select).toFixed(2)),
    workloadsSelectedLastChange: selected,
    closureMsMedian: Number(median(fast).toFixed(2)),
    reachedTargetsLastChange: reached,
    multiSourceBfsMsMedian: Number(median(multiSource).toFixed(2)),
    perFileBfsMsMedian: Number(median(perFile).toFixed(2)),
    closureSpeedupVsMultiSourceBfs: Number((median(multiSource) / median(fast)).toFixed(2)),
    closureSpeedupVsPerFileBfs: Number((median(perFile) / median(fast)).toFixed(1)),
  };
  process.stderr.write(
    `${targets.length} targets, ${edges} edges (both ends united in ${figures.unionIndexBuildMs} ms); 100-file change: selection ${figures.selectMs100k} ms; closure ${figures.closureMsMedian} ms vs ${figures.multiSourceBfsMsMedian} ms (one BFS over a Map) and ${figures.perFileBfsMsMedian} ms (BFS per file)\n`,
  );
  return figures;
}

export async function run(args: string[] = []): Promise<void> {
  const quick = args.includes('--quick');
  const selection = await selectionFigures();
  const read = await readBothEndsFigures();
  process.stderr.write(
    `1,000-package workspace at two revisions: ${read.readBothEndsMs} ms (one end from the working tree: ${read.workingTreeOneEndMs} ms; git show per file, both ends: ${read.gitShowPerFileBothEndsMs} ms)\n`,
  );
  const history = await selectionHistoryFigures(quick ? 14 : 40);
  process.stderr.write(
    `history of ${history.historyCommits} commits: selected ${history.historyWorkloadsSelected}, reachable ${history.historyWorkloadsReachable} (${history.selectedVsReachable}); today's defaults ${history.historyWorkloadsToday} (${history.todaySelectedVsReachable}); missed ${history.missedReachableWorkloads}\n`,
  );
  const figures: Record<string, number | string> = {
    baseline:
      'closure: one multi-source BFS over a Map and a BFS per file, same owner lookup; reading: one end from the working tree, and git show per file at both ends; history: the defaults before this change (no input sets, no lockfile narrowing) on the same commits; all in the same run',
    ...selection,
    ...read,
    ...history,
  };
  const targets = {
    selectMs100k: { value: selection.selectMs100k, max: 100 },
    closureSpeedupVsMultiSourceBfs: { value: selection.closureSpeedupVsMultiSourceBfs, min: 1 },
    readBothEndsMs: { value: read.readBothEndsMs, max: 1000 },
    readBothEndsSpeedupVsGitShowPerFile: { value: read.readBothEndsSpeedupVsGitShowPerFile, min: 5 },
    selectedVsReachable: { value: history.selectedVsReachable, max: 1.1 },
    missedReachableWorkloads: { value: history.missedReachableWorkloads, max: 0 },
  };
  process.stdout.write(`${JSON.stringify({ bench: 'triggers', figures, targets })}\n`);
}
