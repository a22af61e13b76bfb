/** The example serving stack: something real to run Tandem against. */
export { startStack, type Stack, type StackOptions, type StackUrls, type StackService } from './start-stack.js';
export { startService, serviceConfigFromEnv, STACK_SERVICES, type ServiceConfig, type RunningService } from './run-service.js';
export { generateTraffic, productionRequest, type TrafficOptions, type TrafficResult } from './traffic.js';
export { parseFaults, formatFaults, DEFAULT_MALFORMED_MODEL, type StackFaults } from './faults.js';
export { RANKING_LEVELS, PREDICTION_LEVELS, LEVELS_HEADER, parseLevelsHeader } from './levels.js';
export { SURFACES, type RecommendRequest, type RecommendResponse } from './query-service.js';
export { modelFor, type RankedItem } from './ranking-service.js';
export { IDENTITY_PREFIX, DEADLINE_HEADER, type Identity } from './service-host.js';
export type { PredictionShard } from './prediction-service.js';
export { metricTotal } from './metric-total.js';
export { pacedRecords, type PacedRecords } from './paced-records.js';
export { rankingCorpus } from './ranking-corpus.js';
export { RANKING_LOAD_FACTOR } from './capacity-rate.js';
export {
  runExampleCapacity,
  rankingLoadFactorHere,
  exampleLattice,
  EXAMPLE_LATTICE_YAML,
  type ExampleCapacityOptions,
  type ExampleCapacityResult,
} from './capacity-scenario.js';
