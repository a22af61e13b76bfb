/**
 * Selection for a git change end to end: resolve both revisions (a missing
 * one is an input error), list the changed files, load the build graph,
 * diff every changed config file setting by setting, read the consumption
 * index within the recency window, and select.
 */
import { relative, resolve } from 'node:path';
import type { TandemConfig } from '../core/index.js';
import type { ConfigReadStore } from '../store/index.js';
import { loadBuildGraph } from './graph-loaders.js';
import { changedFiles, fileAt, resolveRevision } from './git.js';
import { changedSettings } from './config-diff.js';
import { globToRegExp, matchesAny } from './glob.js';
import { selectWorkloads, type ConfigChange, type LatticeChange, type Selection } from './select.js';
import { changedLatticeStates } from './lattice-changes.js';
import { changedLockedPackages } from './lockfile-changes.js';

export interface ChangeSelection extends Selection {
  readonly base: string;
  readonly head: string;
  readonly configChanges: readonly ConfigChange[];
}

export async function selectForChange(options: { config: TandemConfig; repo: string; base: string; head: string; configReads: ConfigReadStore; nowMs: number }): Promise<ChangeSelection> {
  const { config, repo } = options;
  const base = await resolveRevision(repo, options.base, '--base');
  const head = await resolveRevision(repo, options.head, '--head');
  const files = await changedFiles(repo, base, head);
  const graphSource = config.triggers.graph;
  const graph = graphSource ? await loadBuildGraph(graphSource, repo) : undefined;
  const graphFile = graphSource?.kind === 'json' ? relative(repo, resolve(repo, graphSource.file)) : undefined;
  const reads = await options.configReads.latest({ sinceMs: options.nowMs - config.triggers.configRecency });
  const readFiles = new Set(reads.map((r) => r.file));
  const declared = config.workloads.flatMap((w) => w.triggers.configFiles).map(globToRegExp);
  const configChanges: ConfigChange[] = [];
  for (const file of files) {
    if (!readFiles.has(file) && !matchesAny(file, declared)) continue;
    const [before, after] = await Promise.all([fileAt(repo, base, file), fileAt(repo, head, file)]);
    configChanges.push({ file, settings: changedSettings(file, before, after) });
  }
  const latticeGlobs = config.triggers.latticeFiles.map(globToRegExp);
  const latticeChanges: LatticeChange[] = [];
  for (const file of files.filter((f) => matchesAny(f, latticeGlobs))) {
    const [before, after] = await Promise.all([fileAt(repo, base, file), fileAt(repo, head, file)]);
    latticeChanges.push({ file, services: changedLatticeStates(file, before, after) });
  }
  const lockfileChanges = new Map<string, Set<string>>();
  if (config.triggers.narrowLockfile) {
    for (const file of files.filter((f) => f.endsWith('package-lock.json'))) {
      const [before, after] = await Promise.all([fileAt(repo, base, file), fileAt(repo, head, file)]);
      const packages = changedLockedPackages(before, after);
      if (packages) lockfileChanges.set(file, packages);
    }
  }
  const selection = selectWorkloads({ config, ...(graph ? { graph } : {}), ...(graphFile ? { graphFile } : {}), changedFiles: files, configChanges, configReads: reads, change: head, latticeChanges, lockfileChanges });
  return { ...selection, base, head, configChanges };
}
