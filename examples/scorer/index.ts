export { startScorer, scoreItems, scoringSteps, type ScorerOptions } from './scorer-service.js';
export { startFeatureStore, userVector } from './feature-store.js';
export { scorerCorpus } from './scorer-corpus.js';
