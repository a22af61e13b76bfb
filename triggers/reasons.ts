/**
 * Why a workload was selected, skipped or deferred: structured for CI
 * (`kind` plus the file, path and edge kinds it rests on) and worded for a
 * person (`message`). docs/triggers.md lists the kinds.
 */
export type ReasonKind = 'graph' | 'global' | 'unowned' | 'ignored' | 'config' | 'lattice' | 'sampled' | 'deferred' | 'unreached';

export interface Reason {
  readonly kind: ReasonKind;
  readonly message: string;
  /** The changed file the reason rests on. */
  readonly file?: string;
  /** unowned: every changed file no target owns (one reason for all of them). */
  readonly files?: readonly string[];
  /** graph: the changed file, then each target from the one owning it to the workload's. */
  readonly path?: readonly string[];
  /** graph: the kind of each edge between consecutive targets of `path` ("dependency", "devDependency", …). */
  readonly edges?: readonly string[];
  /** graph: a lockfile change reached the first target through these changed packages. */
  readonly packages?: readonly string[];
  /** ignored: the input set (or pattern) the file fell in, and the target owning it. */
  readonly inputSet?: string;
  readonly target?: string;
  /** config: the changed settings the service read, and the level the decision was made at. */
  readonly settings?: readonly string[];
  readonly level?: 'setting' | 'file' | 'declared';
  /** lattice: the states whose level for the service changed. */
  readonly states?: readonly string[];
  /** sampled, deferred: the (change, workload) hash and the workload's sampling probability. */
  readonly hash?: number;
  readonly probability?: number;
}

/** The words of a graph reason; edges that are not plain dependencies are named. */
export function graphMessage(path: readonly string[], edges: readonly string[], packages?: readonly string[]): string {
  const cause = packages ? `${path[0]} (${packages.slice(0, 5).join(', ')}${packages.length > 5 ? ', …' : ''})` : path[0]!;
  const targets = path.slice(1);
  if (targets.length === 1) return `${cause} is in target ${targets[0]}`;
  const labelled = edges.flatMap((kind, i) => (kind === 'dependency' ? [] : [`${targets[i + 1]} has ${targets[i]} as a ${kind}`]));
  return `${cause} reaches ${targets[targets.length - 1]} through ${targets.slice(0, -1).join(' → ')}${labelled.length > 0 ? ` (${labelled.join('; ')})` : ''}`;
}

/** The key a reason's workloads are grouped under in human output, and the group's heading. */
export function reasonGroup(reason: Reason): { key: string; heading: string } {
  switch (reason.kind) {
    case 'graph':
      return {
        key: `graph\0${reason.file}`,
        heading: reason.packages
          ? `${reason.file} changed ${reason.packages.slice(0, 5).join(', ')}${reason.packages.length > 5 ? ', …' : ''} (lockfile), through the build graph`
          : `${reason.file} changed, through the build graph`,
      };
    case 'lattice':
      return { key: `lattice\0${reason.file}`, heading: `lattice ${reason.file} changed a level` };
    case 'sampled':
      return { key: 'sampled', heading: 'low priority, sampled in at diff time' };
    case 'deferred':
      return { key: 'deferred', heading: 'low priority, sampled out at diff time; runs at land' };
    case 'ignored':
      return { key: `ignored\0${reason.inputSet}`, heading: `only files in ignored inputs (${reason.inputSet}) reach their targets` };
    default:
      return { key: `${reason.kind}\0${reason.message}`, heading: reason.message };
  }
}
