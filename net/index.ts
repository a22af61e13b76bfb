/**
 * The transport layer every protocol shares: what the recorder, the replayer and the router must do alike. A change
 * to how HTTP/2 streams are passed on, which headers are connection-specific or how bodies are bounded is made here.
 */
export { withHeaderLimits } from './h2-limits.js';
export { configureTransport, transportLimits, type TransportLimits } from './transport-limits.js';
export { ResetBudget, type ResetBudgetOptions } from './reset-budget.js';
export { BodyCopy, BodyBudget, BODY_BUDGET } from './body-copy.js';
export { withoutHopByHop, CONNECTION_HEADERS, HOP_BY_HOP_HEADERS } from './hop-by-hop.js';
export {
  GRPC_DEFAULT_MAX_MESSAGE_BYTES,
  GRPC_STATUS,
  GRPC_STATUS_NAMES,
  grpcStatusName,
  isGrpcContentType,
  grpcMethodOf,
  splitMessages,
  frameMessage,
  uncompressedPayload,
  decodedMessages,
  type DecodedMessages,
  parseGrpcTimeout,
  decodeGrpcMessage,
  encodeGrpcMessage,
  grpcEndingOf,
  type GrpcMessage,
} from './grpc-wire.js';
export { protocolListener, tlsProtocolListener, type ProtocolListener, type ProtocolListenerOptions, type TlsIdentity } from './protocol-listener.js';
export { clientFinished, forwardStream, forwardableHeaders, watchConnection, reachedPeer, type ForwardTap } from './h2-forward.js';
export { loadGrpcSchema, loadDescriptorSet, schemaFromDescriptorSet, grpcSchemaOf, type GrpcSchema, type GrpcSchemaConfig } from './grpc-schema.js';
export { grpcUnaryCall, type UnaryAnswer } from './grpc-unary.js';
export { grpcHealth, HEALTH_CHECK_PATH } from './grpc-health.js';
export { reflectDescriptorSet } from './grpc-reflection.js';
export { H2SessionPool, type H2SessionPoolOptions } from './h2-session-pool.js';
export { transportFailureOf, type TransportFailure } from './transport-errors.js';
