/**
 * Which workloads a change selects, and why (FIRE §6). In order:
 * a changed global input selects everything; a changed file owned by no
 * target (and not ignored, and not a config file) selects everything —
 * conservative; a workload whose targets the change reaches through reverse
 * dependencies is selected with the shortest path; a changed config file
 * selects a workload when its service read the file recently, narrowed to
 * the changed settings where there is per-setting evidence. Low-priority
 * workloads are then sampled by a hash of (change, workload), so retries
 * agree; those left out are deferred, with the reason.
 */
import { ConfigError, fnv1a, type TandemConfig, type WorkloadConfig } from '../core/index.js';
import type { ConfigReadSummary } from '../store/index.js';
import type { BuildGraph } from './build-graph.js';
import { globToRegExp, matchesAny } from './glob.js';

export interface ConfigChange {
  readonly file: string;
  /** Changed settings (dotted paths); undefined when the file cannot be compared setting by setting. */
  readonly settings?: readonly string[] | undefined;
}

export interface LatticeChange {
  readonly file: string;
  /** Service → states whose level for it changed; undefined when the file is not a readable lattice. */
  readonly services: ReadonlyMap<string, readonly string[]> | undefined;
}

export interface SelectedWorkload {
  readonly workload: string;
  /** Lattice states whose level for this workload's service changed: candidates to validate. */
  readonly candidateStates?: readonly string[];
  readonly priority: WorkloadConfig['triggers']['priority'];
  readonly reasons: readonly string[];
  /** Changed file → … → the workload's target, for build-graph selections. */
  readonly path?: readonly string[];
}

export interface Selection {
  readonly changedFiles: readonly string[];
  readonly selected: readonly SelectedWorkload[];
  readonly skipped: readonly { readonly workload: string; readonly reason: string }[];
  readonly deferred: readonly { readonly workload: string; readonly reason: string }[];
}

export interface SelectOptions {
  readonly config: TandemConfig;
  readonly graph?: BuildGraph;
  /** The graph's own file, a global input by definition. */
  readonly graphFile?: string;
  readonly changedFiles: readonly string[];
  readonly configChanges?: readonly ConfigChange[];
  /** Latest reads from the consumption index within the recency window. */
  readonly configReads?: readonly ConfigReadSummary[];
  /** Identifies the change for sampling (e.g. the head commit). */
  readonly change: string;
  readonly latticeChanges?: readonly LatticeChange[];
  /** Lockfile → direct dependencies whose resolved subtree changed (narrowing enabled and readable). */
  readonly lockfileChanges?: ReadonlyMap<string, ReadonlySet<string>>;
}

/** A uniform number in [0, 1) from (change, workload): the same change always samples the same way. */
export function sampleValue(change: string, workload: string): number {
  return fnv1a(`${change}\u0000${workload}`) / 4_294_967_296;
}

/** A workload naming a target the graph does not have would never be selected: bad config, named. */
function assertTargetsExist(workloads: readonly WorkloadConfig[], graph: BuildGraph): void {
  const problems: string[] = [];
  workloads.forEach((w, i) => {
    for (const target of w.triggers.targets) if (!graph.has(target)) problems.push(`workloads[${i}] (${w.name}).triggers.targets: "${target}" is not a target of the build graph`);
  });
  if (problems.length > 0) throw new ConfigError(problems, 'config');
}

export const serviceOf = (w: WorkloadConfig): string => w.triggers.service ?? w.tier;

export function selectWorkloads(options: SelectOptions): Selection {
  const { config, changedFiles } = options;
  const workloads = config.workloads;
  const globalInputs = [...config.triggers.globalInputs, ...(options.graphFile ? [options.graphFile] : [])].map(globToRegExp);
  const ignore = config.triggers.ignore.map(globToRegExp);
  const configGlobs = new Map(workloads.map((w) => [w.name, w.triggers.configFiles.map(globToRegExp)]));
  const readFiles = new Set((options.configReads ?? []).map((r) => r.file));
  const latticeGlobs = config.triggers.latticeFiles.map(globToRegExp);
  const isConfigFile = (file: string): boolean => readFiles.has(file) || matchesAny(file, latticeGlobs) || [...configGlobs.values()].some((globs) => matchesAny(file, globs));
  const narrowed = options.lockfileChanges ?? new Map<string, ReadonlySet<string>>();

  const reasons = new Map<string, string[]>(workloads.map((w) => [w.name, []]));
  const paths = new Map<string, readonly string[]>();
  const everything = (reason: string): void => {
    for (const w of workloads) reasons.get(w.name)!.push(reason);
  };

  const seeds: { target: string; cause: string }[] = [];
  for (const file of changedFiles) {
    if (!matchesAny(file, globalInputs)) continue;
    const packages = narrowed.get(file);
    if (packages && options.graph?.knowsExternalDeps) {
      // Narrowed: the workspace packages using a changed dependency are the changed targets.
      for (const target of options.graph.usersOf(packages)) seeds.push({ target, cause: `${file} (${[...packages].slice(0, 5).join(', ')}${packages.size > 5 ? ', …' : ''})` });
    } else everything(`global input ${file} changed`);
  }

  const notConfig = changedFiles.filter((f) => !isConfigFile(f));
  if (options.graph) assertTargetsExist(workloads, options.graph);
  if (options.graph) {
    const { reached, unowned } = options.graph.affected(notConfig, seeds);
    for (const file of unowned) if (!matchesAny(file, ignore) && !matchesAny(file, globalInputs)) everything(`${file} is owned by no build target (conservative: add it to triggers.ignore if it cannot affect a service)`);
    for (const w of workloads) {
      let best: readonly string[] | undefined;
      for (const target of w.triggers.targets) {
        const reach = reached.get(target);
        if (reach && (best === undefined || reach.path.length < best.length)) best = reach.path;
      }
      if (best) {
        reasons.get(w.name)!.push(best.length === 2 ? `${best[0]} is in target ${best[1]}` : `${best[0]} reaches ${best[best.length - 1]} through ${best.slice(1, -1).join(' → ')}`);
        paths.set(w.name, best);
      }
    }
  } else {
    for (const file of notConfig) if (!matchesAny(file, ignore) && !matchesAny(file, globalInputs)) everything(`${file} changed and no build graph is configured (conservative)`);
  }

  addConfigReasons(options, configGlobs, reasons);

  const candidates = addLatticeReasons(options, reasons, everything);

  return { changedFiles, ...partition(options, reasons, paths, candidates) };
}

/** Workloads whose service read a changed config file, by setting where both sides allow it (FIRE's consumption index). */
function addConfigReasons(options: SelectOptions, configGlobs: ReadonlyMap<string, readonly RegExp[]>, reasons: Map<string, string[]>): void {
  const workloads = options.config.workloads;
  const reads = options.configReads ?? [];
  for (const change of options.configChanges ?? []) {
    for (const w of workloads) {
      const service = serviceOf(w);
      const declared = matchesAny(change.file, configGlobs.get(w.name)!);
      const fileReads = reads.filter((r) => r.service === service && r.file === change.file);
      if (fileReads.length === 0) {
        if (declared && reads.length === 0) reasons.get(w.name)!.push(`config ${change.file} changed (declared in triggers.configFiles; no consumption index yet)`);
        continue;
      }
      const settingReads = fileReads.filter((r) => r.setting !== '');
      if (change.settings === undefined || settingReads.length === 0) {
        reasons.get(w.name)!.push(`config ${change.file} changed and ${service} read it (file level${change.settings === undefined ? ': not comparable setting by setting' : ': no per-setting evidence'})`);
        continue;
      }
      const read = change.settings.filter((s) => settingReads.some((r) => r.setting === s || s.startsWith(`${r.setting}.`) || r.setting.startsWith(`${s}.`)));
      if (read.length > 0) reasons.get(w.name)!.push(`config ${change.file}: ${service} read changed setting(s) ${read.join(', ')}`);
    }
  }

}

/** Workloads whose service's level changed in some lattice state; returns those states per workload. */
function addLatticeReasons(options: SelectOptions, reasons: Map<string, string[]>, everything: (reason: string) => void): Map<string, Set<string>> {
  const workloads = options.config.workloads;
  const candidates = new Map<string, Set<string>>();
  for (const change of options.latticeChanges ?? []) {
    if (change.services === undefined) {
      everything(`lattice ${change.file} changed and could not be compared state by state (conservative)`);
      continue;
    }
    for (const w of workloads) {
      const states = change.services.get(serviceOf(w));
      if (!states || states.length === 0) continue;
      reasons.get(w.name)!.push(`lattice ${change.file} changed ${serviceOf(w)}'s level in ${states.join(', ')}`);
      const set = candidates.get(w.name) ?? new Set<string>();
      for (const s of states) set.add(s);
      candidates.set(w.name, set);
    }
  }

  return candidates;
}

/** Selected (with reasons), skipped (why not) and deferred (low priority, sampled out at diff time). */
function partition(options: SelectOptions, reasons: ReadonlyMap<string, string[]>, paths: ReadonlyMap<string, readonly string[]>, candidates: ReadonlyMap<string, Set<string>>): Omit<Selection, 'changedFiles'> {
  const selected: SelectedWorkload[] = [];
  const skipped: Selection['skipped'][number][] = [];
  const deferred: Selection['deferred'][number][] = [];
  for (const w of options.config.workloads) {
    const why = reasons.get(w.name)!;
    if (why.length === 0) {
      skipped.push({ workload: w.name, reason: w.triggers.targets.length === 0 && w.triggers.configFiles.length === 0 ? 'declares no trigger targets or config files' : 'no changed file reaches its targets, and no changed config setting it reads' });
      continue;
    }
    if (w.triggers.priority === 'low' && w.triggers.sampleProbability < 1) {
      const value = sampleValue(options.change, w.name);
      if (value >= w.triggers.sampleProbability) {
        deferred.push({ workload: w.name, reason: `low priority: sampled out at diff time (hash ${value.toFixed(3)} >= p ${w.triggers.sampleProbability}); runs at land` });
        continue;
      }
    }
    selected.push({
      workload: w.name,
      priority: w.triggers.priority,
      reasons: [...new Set(why)],
      ...(paths.has(w.name) ? { path: paths.get(w.name)! } : {}),
      ...(candidates.has(w.name) ? { candidateStates: [...candidates.get(w.name)!] } : {}),
    });
  }
  return { selected, skipped, deferred };
}

