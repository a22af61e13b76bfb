/**
 * `selectedVsReachable` for the triggers bench: over generated monorepo
 * histories (yarn v1, pnpm v9 and npm v3 lockfiles), the workloads `affected`
 * selects divided by the workloads the commits' sources and resolved
 * dependency changes reach through the graph (the generator's ground truth,
 * closed by a BFS of its own). Today's behaviour is measured beside it on the
 * same commits: no input sets and no lockfile narrowing (the defaults before
 * this change), with the graph still read at both ends — so today's real
 * figure is at least this high. A workload the reference reaches and the
 * selection misses is counted: it must be none.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../core/index.js';
import { createLocalStore } from '../../store/index.js';
import { selectForChange } from '../../triggers/index.js';
import { generateHistory, reachable, type LockKind } from './monorepo-history.js';

const TEMPLATE = { workloadTemplates: [{ targets: ['@m/*'], workload: {} }] };

export async function selectionHistoryFigures(commitsPerKind: number): Promise<Record<string, number>> {
  const now = { selected: 0, today: 0, reachable: 0, missed: 0, commits: 0 };
  const byKind = new Map<string, { selected: number; today: number; reachable: number }>();
  for (const [k, kind] of (['yarn', 'pnpm', 'npm'] as LockKind[]).entries()) {
    const dir = await mkdtemp(join(tmpdir(), `tandem-bench-history-${kind}-`));
    const store = createLocalStore({ dir: join(dir, '.tandem-store') });
    try {
      const history = await generateHistory(dir, kind, commitsPerKind, 100 + k);
      const defaults = parseConfig({ triggers: { graph: { kind: 'workspaces' } }, ...TEMPLATE });
      const today = parseConfig({ triggers: { graph: { kind: 'workspaces' }, ignoredInputs: [], narrowLockfile: false }, ...TEMPLATE });
      let before = history[0]!.deps;
      let parent = 'HEAD~' + String(history.length);
      for (const step of history) {
        const options = { repo: dir, base: parent, head: step.commit, configReads: store.configReads, nowMs: Date.now() };
        const selected = new Set((await selectForChange({ ...options, config: defaults })).selected.map((s) => s.workload));
        const todaySelected = (await selectForChange({ ...options, config: today })).selected.length;
        const reference = [...reachable(step.changedPackages, before, step.deps)].map((i) => `p${i}`);
        now.missed += reference.filter((w) => !selected.has(w)).length;
        now.selected += selected.size;
        now.today += todaySelected;
        now.reachable += reference.length;
        now.commits++;
        const entry = byKind.get(step.kind) ?? { selected: 0, today: 0, reachable: 0 };
        byKind.set(step.kind, { selected: entry.selected + selected.size, today: entry.today + todaySelected, reachable: entry.reachable + reference.length });
        before = step.deps;
        parent = step.commit;
      }
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  }
  for (const [kind, e] of [...byKind].sort())
    process.stderr.write(
      `  ${kind.padEnd(14)} selected ${String(e.selected).padStart(5)}  today ${String(e.today).padStart(5)}  reachable ${String(e.reachable).padStart(5)}\n`,
    );
  return {
    historyCommits: now.commits,
    historyWorkloadsSelected: now.selected,
    historyWorkloadsReachable: now.reachable,
    historyWorkloadsToday: now.today,
    selectedVsReachable: Number((now.selected / now.reachable).toFixed(3)),
    todaySelectedVsReachable: Number((now.today / now.reachable).toFixed(3)),
    missedReachableWorkloads: now.missed,
  };
}
