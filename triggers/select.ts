/**
 * Which workloads a change selects, and why (FIRE §6). In order: a changed
 * global input selects everything (a lockfile is narrowed to the packages
 * whose resolved dependency closure changed); a file in an ignored input
 * set of its target (docs, tests, snapshots, stories) selects nothing, said
 * so; a file owned by no target (and not ignored, not a config file)
 * selects everything — conservative; a workload whose targets the change
 * reaches through reverse dependencies is selected with the shortest path,
 * caused by a source file before a doc or test; a changed config file
 * selects a workload when its service read the file recently, narrowed to
 * the changed settings where there is per-setting evidence; a lattice
 * change selects the services whose level changed. Low-priority workloads
 * are then sampled by a hash of (change, workload), so retries agree; those
 * left out are deferred, with the reason.
 */
import { ConfigError, fnv1a, type TandemConfig, type WorkloadConfig } from '../core/index.js';
import type { ConfigReadSummary } from '../store/index.js';
import type { BuildGraph } from './build-graph.js';
import { globToRegExp, matchesAny } from './glob.js';
import { InputSets } from './input-sets.js';
import type { LockfileReading } from './lockfile-changes.js';
import { graphMessage, type Reason } from './reasons.js';

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
  /** The build targets the workload stands for (its `triggers.targets`). */
  readonly targets?: readonly string[];
  /** Lattice states whose level for this workload's service changed: candidates to validate. */
  readonly candidateStates?: readonly string[];
  readonly priority: WorkloadConfig['triggers']['priority'];
  readonly reasons: readonly Reason[];
  /** Changed file → … → the workload's target, for build-graph selections. */
  readonly path?: readonly string[];
}

export interface IgnoredFile {
  readonly file: string;
  /** The target owning it (none: a file no target owns). */
  readonly target?: string;
  /** The input set or pattern it fell in (`triggers.ignore` for the repository-level list). */
  readonly inputSet: string;
}

export interface Selection {
  readonly changedFiles: readonly string[];
  readonly selected: readonly SelectedWorkload[];
  readonly skipped: readonly { readonly workload: string; readonly reason: Reason }[];
  /** Sampled out at diff time: the reason, and the reasons it would have run for. */
  readonly deferred: readonly { readonly workload: string; readonly reason: Reason; readonly reasons: readonly Reason[] }[];
  readonly ignoredFiles: readonly IgnoredFile[];
  /** How the inputs were read, where a reader should know (a graph from the working tree, a lockfile changing nothing resolved). */
  readonly notes: readonly string[];
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
  /** Lockfile → what its change reached (narrowing enabled), or why it could not be read. */
  readonly lockfileChanges?: ReadonlyMap<string, LockfileReading>;
  readonly notes?: readonly string[];
}

/** A uniform number in [0, 1) from (change, workload): the same change always samples the same way. */
export function sampleValue(change: string, workload: string): number {
  return fnv1a(`${change}\u0000${workload}`) / 4_294_967_296;
}

/** A workload naming a target the graph does not have would never be selected: bad config, named. */
export function assertTargetsExist(workloads: readonly WorkloadConfig[], graph: Pick<BuildGraph, 'has'>): void {
  const problems: string[] = [];
  workloads.forEach((w, i) => {
    for (const target of w.triggers.targets)
      if (!graph.has(target)) problems.push(`workloads[${i}] (${w.name}).triggers.targets: "${target}" is not a target of the build graph`);
  });
  if (problems.length > 0) throw new ConfigError(problems, 'config');
}

export const serviceOf = (w: WorkloadConfig): string => w.triggers.service ?? w.tier;

type Seed = { target: string; cause: string; packages: readonly string[] };

export function selectWorkloads(options: SelectOptions): Selection {
  const { config, changedFiles, graph } = options;
  const workloads = config.workloads;
  const globalInputs = [...config.triggers.globalInputs, ...(options.graphFile ? [options.graphFile] : [])].map(globToRegExp);
  const ignore = config.triggers.ignore.map(globToRegExp);
  const configGlobs = new Map(workloads.map((w) => [w.name, w.triggers.configFiles.map(globToRegExp)]));
  const readFiles = new Set((options.configReads ?? []).map((r) => r.file));
  const latticeGlobs = config.triggers.latticeFiles.map(globToRegExp);
  const isConfigFile = (file: string): boolean =>
    readFiles.has(file) || matchesAny(file, latticeGlobs) || [...configGlobs.values()].some((globs) => matchesAny(file, globs));
  const inputs = new InputSets(config.triggers);
  const notes = [...(options.notes ?? [])];

  const reasons = new Map<string, Reason[]>(workloads.map((w) => [w.name, []]));
  const paths = new Map<string, readonly string[]>();
  const everything = (reason: Reason): void => {
    for (const w of workloads) reasons.get(w.name)!.push(reason);
  };

  const seeds: Seed[] = [];
  for (const file of changedFiles) {
    if (!matchesAny(file, globalInputs)) continue;
    const reading = options.lockfileChanges?.get(file);
    if (reading && 'unreadable' in reading)
      everything({ kind: 'global', file, message: `global input ${file} changed and could not be narrowed (${reading.unreadable})` });
    else if (reading && graph?.knowsExternalDeps) seeds.push(...lockfileSeeds(file, reading, graph, notes));
    else everything({ kind: 'global', file, message: `global input ${file} changed` });
  }

  const ignoredFiles: IgnoredFile[] = [];
  const counted: string[] = [];
  const unowned: string[] = [];
  for (const file of changedFiles) {
    if (isConfigFile(file) || matchesAny(file, globalInputs)) continue;
    const owners = graph?.ownersOf(file) ?? [];
    if (owners.length > 0) {
      const sets = owners.map((o) => inputs.ignoredBy(file, o.root, o.target));
      if (sets.every((set) => set !== undefined)) ignoredFiles.push({ file, target: owners[0]!.target, inputSet: sets[0]! });
      else counted.push(file);
      continue;
    }
    const set = inputs.ignoredBy(file, '') ?? (matchesAny(file, ignore) ? 'triggers.ignore' : undefined);
    if (set !== undefined) ignoredFiles.push({ file, inputSet: set });
    else unowned.push(file);
  }
  // One reason for all of them, given to every workload once: seven `.github` files over seventy workloads
  // were 490 reasons (107 KB of JSON) saying the same thing.
  if (unowned.length > 0) {
    const listed = `${unowned.slice(0, 5).join(', ')}${unowned.length > 5 ? `, … (${unowned.length} in all)` : ''}`;
    everything({
      kind: 'unowned',
      file: unowned[0]!,
      files: unowned,
      message: graph
        ? `${listed} ${unowned.length === 1 ? 'is' : 'are'} owned by no build target (conservative: add ${unowned.length === 1 ? 'it' : 'them'} to triggers.ignore if ${unowned.length === 1 ? 'it' : 'they'} cannot affect a service)`
        : `${listed} changed and no build graph is configured (conservative)`,
    });
  }

  if (graph) {
    assertTargetsExist(workloads, graph);
    // Source files first: among equally short paths, the cause shown is code, not a doc or test.
    const ordered = [...counted.filter((f) => !inputs.isNonSource(f)), ...counted.filter((f) => inputs.isNonSource(f))];
    const { reached } = graph.affected(
      ordered,
      seeds.map((s) => ({ target: s.target, cause: s.cause })),
    );
    const packagesOf = new Map(seeds.map((s) => [`${s.cause}\0${s.target}`, s.packages]));
    for (const w of workloads) {
      const best = nearest(w, (target) => reached.get(target));
      if (!best) continue;
      const packages = packagesOf.get(`${best.path[0]!}\0${best.path[1]!}`);
      reasons.get(w.name)!.push({
        kind: 'graph',
        file: best.path[0]!,
        path: best.path,
        edges: best.edges,
        ...(packages ? { packages } : {}),
        message: graphMessage(best.path, best.edges, packages),
      });
      paths.set(w.name, best.path);
    }
  }

  addConfigReasons(options, configGlobs, reasons);
  const candidates = addLatticeReasons(options, reasons, everything);
  const ignoredReach =
    graph && ignoredFiles.some((f) => f.target !== undefined) ? ignoredReasons(graph, workloads, ignoredFiles, reasons) : new Map<string, Reason>();
  return { changedFiles, ...partition(options, reasons, paths, candidates, ignoredReach), ignoredFiles, notes };
}

/** The shortest reach of any of the workload's targets. */
function nearest<R extends { path: readonly string[] }>(w: WorkloadConfig, reach: (target: string) => R | undefined): R | undefined {
  let best: R | undefined;
  for (const target of w.triggers.targets) {
    const r = reach(target);
    if (r && (best === undefined || r.path.length < best.path.length)) best = r;
  }
  return best;
}

/** The targets a narrowed lockfile change reaches first: importers whose dependencies changed (pnpm), and users of changed packages. */
function lockfileSeeds(file: string, change: Exclude<LockfileReading, { unreadable: string }>, graph: BuildGraph, notes: string[]): Seed[] {
  const packages = [...change.packages].sort();
  const targets = new Set(graph.usersOf(change.packages));
  for (const dir of change.importers ?? []) for (const owner of graph.owners(dir === '' ? 'package.json' : `${dir}/package.json`)) targets.add(owner);
  if (targets.size === 0)
    notes.push(
      packages.length === 0
        ? `${file} changed, but no resolved package in it did`
        : `${file} changed ${packages.length} resolved package(s) (${packages.slice(0, 5).join(', ')}${packages.length > 5 ? ', …' : ''}) that no target declares`,
    );
  // Named by what was bumped below the target's declared dependencies (`lodash`, reached through `express`).
  return [...targets].map((target) => {
    const declared = packages.filter((p) => graph.usersOf([p]).includes(target));
    const bumped = [...new Set(declared.flatMap((p) => change.bumpedUnder?.get(p) ?? [p]))].sort();
    return { target, cause: file, packages: (bumped.length > 0 ? bumped : declared).slice(0, 20) };
  });
}

/** Skipped workloads that only ignored files reach: said so, with the file and its input set. */
function ignoredReasons(
  graph: BuildGraph,
  workloads: readonly WorkloadConfig[],
  ignoredFiles: readonly IgnoredFile[],
  reasons: ReadonlyMap<string, Reason[]>,
): Map<string, Reason> {
  const { reached } = graph.affected(ignoredFiles.filter((f) => f.target !== undefined).map((f) => f.file));
  const setOf = new Map(ignoredFiles.map((f) => [f.file, f]));
  const out = new Map<string, Reason>();
  for (const w of workloads) {
    if (reasons.get(w.name)!.length > 0) continue;
    const best = nearest(w, (target) => reached.get(target));
    if (!best) continue;
    const ignored = setOf.get(best.path[0]!)!;
    out.set(w.name, {
      kind: 'ignored',
      file: ignored.file,
      target: ignored.target!,
      inputSet: ignored.inputSet,
      path: best.path,
      edges: best.edges,
      message: `${ignored.file} would reach its targets but is in ignored inputs (${ignored.inputSet}) of ${ignored.target}`,
    });
  }
  return out;
}

/** Workloads whose service read a changed config file, by setting where both sides allow it (FIRE's consumption index). */
function addConfigReasons(options: SelectOptions, configGlobs: ReadonlyMap<string, readonly RegExp[]>, reasons: Map<string, Reason[]>): void {
  const reads = options.configReads ?? [];
  for (const change of options.configChanges ?? []) {
    const file = change.file;
    for (const w of options.config.workloads) {
      const service = serviceOf(w);
      const fileReads = reads.filter((r) => r.service === service && r.file === file);
      if (fileReads.length === 0) {
        if (matchesAny(file, configGlobs.get(w.name)!) && reads.length === 0)
          reasons
            .get(w.name)!
            .push({ kind: 'config', file, level: 'declared', message: `config ${file} changed (declared in triggers.configFiles; no consumption index yet)` });
        continue;
      }
      const settingReads = fileReads.filter((r) => r.setting !== '');
      if (change.settings === undefined || settingReads.length === 0) {
        reasons.get(w.name)!.push({
          kind: 'config',
          file,
          level: 'file',
          message: `config ${file} changed and ${service} read it (file level${change.settings === undefined ? ': not comparable setting by setting' : ': no per-setting evidence'})`,
        });
        continue;
      }
      const read = change.settings.filter((s) => settingReads.some((r) => r.setting === s || s.startsWith(`${r.setting}.`) || r.setting.startsWith(`${s}.`)));
      if (read.length > 0)
        reasons
          .get(w.name)!
          .push({ kind: 'config', file, level: 'setting', settings: read, message: `config ${file}: ${service} read changed setting(s) ${read.join(', ')}` });
    }
  }
}

/** Workloads whose service's level changed in some lattice state; returns those states per workload. */
function addLatticeReasons(options: SelectOptions, reasons: Map<string, Reason[]>, everything: (reason: Reason) => void): Map<string, Set<string>> {
  const candidates = new Map<string, Set<string>>();
  for (const change of options.latticeChanges ?? []) {
    if (change.services === undefined) {
      everything({ kind: 'lattice', file: change.file, message: `lattice ${change.file} changed and could not be compared state by state (conservative)` });
      continue;
    }
    for (const w of options.config.workloads) {
      const states = change.services.get(serviceOf(w));
      if (!states || states.length === 0) continue;
      reasons
        .get(w.name)!
        .push({ kind: 'lattice', file: change.file, states, message: `lattice ${change.file} changed ${serviceOf(w)}'s level in ${states.join(', ')}` });
      const set = candidates.get(w.name) ?? new Set<string>();
      for (const s of states) set.add(s);
      candidates.set(w.name, set);
    }
  }
  return candidates;
}

/** Selected (with reasons), skipped (why not) and deferred (low priority, sampled out at diff time). */
function partition(
  options: SelectOptions,
  reasons: ReadonlyMap<string, Reason[]>,
  paths: ReadonlyMap<string, readonly string[]>,
  candidates: ReadonlyMap<string, Set<string>>,
  ignoredReach: ReadonlyMap<string, Reason>,
): Pick<Selection, 'selected' | 'skipped' | 'deferred'> {
  const selected: SelectedWorkload[] = [];
  const skipped: Selection['skipped'][number][] = [];
  const deferred: Selection['deferred'][number][] = [];
  for (const w of options.config.workloads) {
    const why = [...new Map(reasons.get(w.name)!.map((r) => [r.message, r])).values()];
    if (why.length === 0) {
      const declaresNothing = w.triggers.targets.length === 0 && w.triggers.configFiles.length === 0;
      skipped.push({
        workload: w.name,
        reason: ignoredReach.get(w.name) ?? {
          kind: 'unreached',
          message: declaresNothing
            ? 'declares no trigger targets or config files'
            : 'no changed file reaches its targets, and no changed config setting it reads',
        },
      });
      continue;
    }
    if (w.triggers.priority === 'low' && w.triggers.sampleProbability < 1) {
      const hash = sampleValue(options.change, w.name);
      const p = w.triggers.sampleProbability;
      if (hash >= p) {
        deferred.push({
          workload: w.name,
          reason: {
            kind: 'deferred',
            hash,
            probability: p,
            message: `low priority: sampled out at diff time (hash ${hash.toFixed(3)} >= p ${p}); runs at land`,
          },
          reasons: why,
        });
        continue;
      }
      why.push({ kind: 'sampled', hash, probability: p, message: `low priority: sampled in at diff time (hash ${hash.toFixed(3)} < p ${p})` });
    }
    selected.push({
      workload: w.name,
      ...(w.triggers.targets.length > 0 ? { targets: w.triggers.targets } : {}),
      priority: w.triggers.priority,
      reasons: why,
      ...(paths.has(w.name) ? { path: paths.get(w.name)! } : {}),
      ...(candidates.has(w.name) ? { candidateStates: [...candidates.get(w.name)!] } : {}),
    });
  }
  return { selected, skipped, deferred };
}
