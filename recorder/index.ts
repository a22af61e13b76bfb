/** Recording production requests into a corpus: sampler, redaction, writer, sidecar, in-process wrappers, imports. */
export { Sampler, type SampleMode, type StickyKey, type SamplerOptions } from './sampler.js';
export { Redactor, REDACTED, ALWAYS_REDACTED_HEADERS, rulesForTier, type RedactionRules, type RedactedBody } from './redact.js';
export { CorpusWriter, type CorpusWriterOptions, type DropReason } from './corpus-writer.js';
export { Recorder, EXPERIMENT_HEADER, type RecorderOptions, type CapturedRequest } from './recorder.js';
export { startSidecar, passOnUpstreamFailure, type Sidecar, type SidecarOptions } from './sidecar.js';
export { startCollector, MIRROR_TOKEN_HEADER, type Collector, type CollectorOptions } from './collector.js';
export { edgeSampling, isNginxQuotable, nginxMirrorConfig, type EdgeSampling, type NginxMirrorOptions } from './edge-config.js';
export { recordingHandler, recordingInterceptor } from './in-process.js';
export { parseHar, type ParsedImport, type SkippedInput } from './import-har.js';
export { parseGor, formatGor, GOR_SEPARATOR } from './import-gor.js';
export { GRPC_CALL_SCHEMA } from './grpc-call-schema.js';
export { MAX_KEPT_RESPONSE_MESSAGES } from './grpc-capture.js';
export { readCorpusWindow, type CorpusWindowOptions } from './lookback.js';
