/** Change-aware triggers: build-graph reachability, config consumption, priority sampling (bisection and lattice changes follow). */
export { BuildGraph, Reached, type BuildTarget, type Reach } from './build-graph.js';
export { loadBuildGraph, loadWorkspaces, parseJsonGraph, type GraphSource } from './graph-loaders.js';
export { globToRegExp, staticPrefix } from './glob.js';
export { changedFiles, fileAt, resolveRevision, revisionsBetween } from './git.js';
export { changedSettings } from './config-diff.js';
export { selectWorkloads, sampleValue, serviceOf, type Selection, type SelectedWorkload, type ConfigChange, type SelectOptions } from './select.js';
export { selectForChange, type ChangeSelection } from './select-for-change.js';
export { bisectRevisions, type BisectResult, type BisectStep, type StepOutcome, type StepVerdict } from './bisect.js';
export { ConfigReadReporter, httpConfigReadSink, startIngestServer, type ConfigReadSink, type IngestServer } from './config-reads.js';
export { evaluateConfigTriggers, type ConfigTriggerEvaluation } from './evaluate-config-triggers.js';
export { commitsSince, type CommitChange } from './git.js';
export { changedLatticeStates } from './lattice-changes.js';
export { changedLockedPackages } from './lockfile-changes.js';
