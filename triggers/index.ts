/** Change-aware triggers: build-graph reachability, config consumption, priority sampling (bisection and lattice changes follow). */
export { BuildGraph, Reached, unionTargets, type BuildTarget, type Reach } from './build-graph.js';
export { loadGraphAtBothEnds, loadWorkspaces, type GraphSource, type GraphFiles, type LoadedGraph } from './graph-loaders.js';
export { parseGraph, type GraphFormat } from './graph-formats.js';
export { RevisionFiles } from './revision-files.js';
export { InputSets } from './input-sets.js';
export { graphMessage, reasonGroup, type Reason, type ReasonKind } from './reasons.js';
export { globToRegExp, staticPrefix } from './glob.js';
export { changedFiles, fileAt, resolveRevision, revisionsBetween } from './git.js';
export { changedSettings } from './config-diff.js';
export {
  selectWorkloads,
  assertTargetsExist,
  sampleValue,
  serviceOf,
  type Selection,
  type SelectedWorkload,
  type ConfigChange,
  type SelectOptions,
  type IgnoredFile,
} from './select.js';
export { selectForChange, type ChangeSelection } from './select-for-change.js';
export { bisectRevisions, type BisectResult, type BisectStep, type StepOutcome, type StepVerdict } from './bisect.js';
export { ConfigReadReporter, httpConfigReadSink, startIngestServer, type ConfigReadSink, type IngestServer } from './config-reads.js';
export { evaluateConfigTriggers, type ConfigTriggerEvaluation } from './evaluate-config-triggers.js';
export { commitsSince, type CommitChange } from './git.js';
export { changedLatticeStates } from './lattice-changes.js';
export { lockfileChange, type LockfileChange, type LockfileReading } from './lockfile-changes.js';
export { lockfileKind, parseLockfile, type LockModel, type LockfileKind } from './lockfile-formats.js';
