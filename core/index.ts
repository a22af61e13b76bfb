export {
  TandemError,
  ConfigError,
  UsageError,
  InputError,
  NotFoundError,
  StoreError,
  QueueError,
  ExperimentCancelledError,
  UpstreamError,
  InternalError,
  errorMessage,
} from './errors.js';
export { systemClock, MAX_TIMER_MS, type Clock } from './clock.js';
export { replyJson, bearerCheck, readBody } from './json-endpoint.js';
export { parseDuration, formatDuration, MAX_DURATION_MS, MAX_TIMER_TEXT } from './duration.js';
export {
  configSchema,
  configJsonSchema,
  NAME_PATTERN,
  isInputSetName,
  type TandemConfig,
  type ConfigInput,
  type StoreConfig,
  type QueueConfig,
  type RecorderConfig,
  type WorkloadConfig,
  type DependencyConfig,
  type DetectorConfig,
  type CheckConfig,
} from './config/schema.js';
export { latticeSchema, type LatticeConfig } from './config/lattice-schema.js';
export { TRANSPORT_DEFAULTS, type TransportConfig } from './config/transport-schema.js';
export { trialDetailsSchema, type TrialDetails, type TrialProcess, type DependencyCounters } from './trial-details.js';
export { expandWorkloadTemplates } from './config/workload-templates.js';
export { loadConfig, parseConfig, parseConfigText, DEFAULT_CONFIG_FILES, type LoadedConfig } from './config/load.js';
export { formatPath } from './config/format-issues.js';
export type {
  CorpusRecord,
  Sample,
  ExperimentRecord,
  ExperimentStatus,
  TrialRecord,
  ExperimentEvent,
  DetectorObservation,
  ConfigRead,
  DependencyErrorRecord,
  RequestOutcome,
  ResponseView,
  ErrorClass,
  GrpcCall,
} from './model.js';
export { LATEST_RECORD_MS } from './model.js';
export { configReferenceMarkdown } from './config/reference.js';
export { fnv1a, seededRandom } from './random.js';
export { treatmentSlotSign } from './slot-order.js';
export { parsePrometheusText, type PrometheusSample, type ParsedExposition } from './prometheus-text.js';
export { freePort } from './free-port.js';
export { escapeControls, hasControlCharacters } from './control-characters.js';
export { DEFAULT_SECRET_NAMES } from './secret-names.js';
export { REVISION_PATTERN, REVISION_RULE, REVISION_MAX_LENGTH, isRevision } from './revision.js';
export { hostPort, listenOn, listeningUrl } from './listen.js';
export { sketchOf, MAX_SKETCH_PATHS, type Json } from './json-sketch.js';
export {
  latencyBucket,
  latencyBucketSql,
  sortedBuckets,
  sketchQuantile,
  LATENCY_SKETCH_GAMMA,
  LATENCY_SKETCH_RELATIVE_ERROR,
  ZERO_LATENCY_BUCKET,
  type LatencyBuckets,
} from './latency-sketch.js';
