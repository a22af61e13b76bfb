/**
 * Selection for a git change end to end: resolve both revisions (a missing
 * one is an input error), list the changed files, read the build graph at
 * both ends and unite it, expand workload templates over its targets,
 * narrow changed lockfiles, diff every changed config file setting by
 * setting, read the consumption index within the recency window, and select.
 */
import { expandWorkloadTemplates, type TandemConfig } from '../core/index.js';
import type { ConfigReadStore } from '../store/index.js';
import { loadGraphAtBothEnds, type LoadedGraph } from './graph-loaders.js';
import { changedFiles, fileAt, resolveRevision } from './git.js';
import { changedSettings } from './config-diff.js';
import { globToRegExp, matchesAny } from './glob.js';
import { selectWorkloads, type ConfigChange, type LatticeChange, type Selection } from './select.js';
import { changedLatticeStates } from './lattice-changes.js';
import { lockfileChange, type LockfileReading } from './lockfile-changes.js';
import { lockfileKind } from './lockfile-formats.js';

export interface ChangeSelection extends Selection {
  readonly base: string;
  readonly head: string;
  readonly configChanges: readonly ConfigChange[];
  /** The config with its workload templates expanded over the graph's targets (what `submit` runs). */
  readonly config: TandemConfig;
}

export async function selectForChange(options: {
  config: TandemConfig;
  repo: string;
  base: string;
  head: string;
  configReads: ConfigReadStore;
  nowMs: number;
}): Promise<ChangeSelection> {
  const { repo } = options;
  const base = await resolveRevision(repo, options.base, '--base');
  const head = await resolveRevision(repo, options.head, '--head');
  const files = await changedFiles(repo, base, head);
  const graphSource = options.config.triggers.graph;
  const loaded: LoadedGraph | undefined = graphSource ? await loadGraphAtBothEnds(graphSource, repo, base, head) : undefined;
  const config = loaded ? expandWorkloadTemplates(options.config, loaded.graph.targets()) : options.config;
  const both = (file: string): Promise<[string | undefined, string | undefined]> => Promise.all([fileAt(repo, base, file), fileAt(repo, head, file)]);
  const reads = await options.configReads.latest({ sinceMs: options.nowMs - config.triggers.configRecency });
  const readFiles = new Set(reads.map((r) => r.file));
  const declared = config.workloads.flatMap((w) => w.triggers.configFiles).map(globToRegExp);
  const configChanges: ConfigChange[] = [];
  for (const file of files) {
    if (!readFiles.has(file) && !matchesAny(file, declared)) continue;
    const [before, after] = await both(file);
    configChanges.push({ file, settings: changedSettings(file, before, after) });
  }
  const latticeGlobs = config.triggers.latticeFiles.map(globToRegExp);
  const latticeChanges: LatticeChange[] = [];
  for (const file of files.filter((f) => matchesAny(f, latticeGlobs))) {
    const [before, after] = await both(file);
    latticeChanges.push({ file, services: changedLatticeStates(file, before, after) });
  }
  const lockfileChanges = new Map<string, LockfileReading>();
  if (config.triggers.narrowLockfile) {
    for (const file of files.filter((f) => lockfileKind(f) !== undefined)) {
      const [before, after] = await both(file);
      lockfileChanges.set(file, lockfileChange(file, before, after));
    }
  }
  const selection = selectWorkloads({
    config,
    ...(loaded ? { graph: loaded.graph, notes: loaded.notes, ...(loaded.file ? { graphFile: loaded.file } : {}) } : {}),
    changedFiles: files,
    configChanges,
    configReads: reads,
    change: head,
    latticeChanges,
    lockfileChanges,
  });
  return { ...selection, base, head, configChanges, config };
}
