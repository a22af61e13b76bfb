/**
 * How each metric is judged: direction, practical threshold, whether it is
 * critical and whether it must have data. Built-in defaults (2% for latency
 * and CPU, half a percentage point for the error share), overridden or
 * extended by the workload's `checks`. Metrics without a policy are reported
 * with their effect and interval but not judged, so a hundred scraped
 * counters do not dilute the multiple-comparison correction.
 */
import type { CheckConfig } from '../../core/index.js';
import type { EffectScale } from './trial-metrics.js';

export type Direction = CheckConfig['direction'];

export interface MetricPolicy {
  readonly metric: string;
  readonly direction: Direction;
  /** Practical threshold on the metric's scale (relative change, or absolute difference of shares). */
  readonly threshold: number;
  readonly critical: boolean;
  readonly mustHaveData: boolean;
}

const DEFAULTS: readonly MetricPolicy[] = [
  // One judged metric per kind of information, so the multiple-comparison correction does not spend power on
  // near-duplicates: the paired per-request shift (the sharpest latency instrument: each record's own cost
  // cancels) for the body of the distribution, p99 for the tail. latency_mean, p50 and p90 are reported with
  // their intervals and judged when a check names them. Critical metrics must be decided for a pass; a judged
  // one fails the experiment when it regresses, but its being undecided does not hold the verdict back (p99
  // of a few thousand requests per trial is too noisy to be decided as often as the body of the distribution).
  { metric: 'latency_shift', direction: 'increase-is-bad', threshold: 0.02, critical: true, mustHaveData: true },
  { metric: 'latency_p99', direction: 'increase-is-bad', threshold: 0.02, critical: false, mustHaveData: false },
  { metric: 'error_share', direction: 'increase-is-bad', threshold: 0.005, critical: true, mustHaveData: true },
  // Resources are first-class: CPU per request is critical. Only deployed arms have a process to measure, so
  // its absence is a failure there (metricPolicies' deployedArms) and not with URL arms.
  // 2%, as latency: a fresh process's CPU per request varies by 1–2% from trial to trial on a typical service, and
  // a ±1% claim then needs about a hundred trials (an unchanged build was left undecided at 1%).
  { metric: 'cpu_per_request', direction: 'increase-is-bad', threshold: 0.02, critical: true, mustHaveData: false },
  { metric: 'rss_bytes', direction: 'increase-is-bad', threshold: 0.02, critical: false, mustHaveData: false },
];

/** The threshold a check gets when it names none. */
export function defaultThreshold(metric: string, scale: EffectScale): number {
  if (metric.includes('cpu')) return 0.02;
  if (scale === 'absolute' || metric.startsWith('error_share')) return 0.005;
  return 0.02;
}

/**
 * Policies for an experiment: the defaults, then the workload's checks (which win). Fan-out per dependency and
 * scraped counters are reported with their intervals and judged only when a check names them: auto-judging one
 * metric per dependency would dilute the multiple-comparison correction of the metrics that decide.
 */
export function metricPolicies(checks: readonly CheckConfig[], options: { readonly deployedArms?: boolean } = {}): Map<string, MetricPolicy> {
  // Deployed arms have processes whose CPU Tandem reads: without it they would pass on latency alone.
  const policies = new Map<string, MetricPolicy>(
    DEFAULTS.map((p) => [p.metric, p.metric === 'cpu_per_request' && options.deployedArms ? { ...p, mustHaveData: true } : p]),
  );
  for (const check of checks) {
    const base = policies.get(check.metric);
    const scale: EffectScale = check.metric.startsWith('error_share') ? 'absolute' : 'relative';
    policies.set(check.metric, {
      metric: check.metric,
      direction: check.direction,
      threshold: check.threshold ?? base?.threshold ?? defaultThreshold(check.metric, scale),
      critical: check.critical,
      mustHaveData: check.mustHaveData,
    });
  }
  return policies;
}
