/** Guardrails: the egress router with its containment policies, and the dependency monitors and detectors that cancel an experiment. */
export { startRouter, EgressRouter, type RouterOptions, type RouterArm, type DependencyCounters } from './router.js';
export { GrpcWriteRules, loadDependencySchemas } from './grpc-writes.js';
export { pinnedShards, allowedTargets, isWrite, withBaggage } from './policies.js';
export { runMonitor, type Detector, type CheckResult, type CheckVerdict, type Cancellation, type MonitorOptions } from './monitor.js';
export { dependencyHealthDetector } from './detectors/dependency-health.js';
export { grpcHealthDetector } from './detectors/grpc-health.js';
export { ERROR_RECORD_SCHEMA, experimentAttributedDetector, type AttributedContext } from './detectors/experiment-attributed.js';
export { SharedSource } from './shared-source.js';
