/** Guardrails: the egress router and its containment policies (dependency monitors come next). */
export { startRouter, EgressRouter, type RouterOptions, type RouterArm, type DependencyCounters } from './router.js';
export { pinnedShards, allowedTargets, isWrite, withBaggage } from './policies.js';
