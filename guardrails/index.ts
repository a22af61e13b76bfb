/** Guardrails: the egress router and its containment policies (dependency monitors come next). */
export { startRouter, EgressRouter, type RouterOptions, type RouterArm, type DependencyCounters } from './router.js';
export { pinnedShards, allowedTargets, isWrite, withBaggage } from './policies.js';
export { runMonitor, type Detector, type CheckResult, type CheckVerdict, type Cancellation, type MonitorOptions } from './monitor.js';
export { dependencyHealthDetector } from './detectors/dependency-health.js';
export { ERROR_RECORD_SCHEMA, experimentAttributedDetector, type AttributedContext } from './detectors/experiment-attributed.js';
export { SharedSource } from './shared-source.js';
