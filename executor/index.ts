/** Running experiments: the replay of one experiment end to end (queues and the lifecycle come with issue 9). */
export { replayExperiment, newExperimentId, type ReplayExperimentOptions, type ReplayExperimentResult } from './replay-experiment.js';
