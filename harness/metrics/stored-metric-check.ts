/**
 * Whether a trial metric read back from the store is one trialMetrics (trial-metrics.ts) could have computed: a
 * name it gives, its scale and unit, finite numbers in their range, and an effect that follows from its values
 * where the effect is computed from them. Stored data is input: a forged or torn event must not be judged.
 */
import type { TrialMetric } from './trial-metrics.js';

/** How a metric's effect relates to its control and treatment values. */
type EffectRule = 'ratio' | 'difference' | 'estimated';

interface MetricShape {
  readonly scale: TrialMetric['scale'];
  readonly units: readonly string[];
  readonly effect: EffectRule;
}

const SHARE: MetricShape = { scale: 'absolute', units: ['share'], effect: 'difference' };
/** The quantile and log-ratio effects are estimated from the pairs, not from the two values stored beside them. */
const LATENCY_ESTIMATED: MetricShape = { scale: 'relative', units: ['ms'], effect: 'estimated' };

const FIXED: Readonly<Record<string, MetricShape>> = {
  latency_mean: { scale: 'relative', units: ['ms'], effect: 'ratio' },
  latency_shift: LATENCY_ESTIMATED,
  latency_p50: LATENCY_ESTIMATED,
  latency_p90: LATENCY_ESTIMATED,
  latency_p99: LATENCY_ESTIMATED,
  error_share: SHARE,
  bytes_mean: { scale: 'relative', units: ['bytes'], effect: 'ratio' },
  cpu_per_request: { scale: 'relative', units: ['cpu s/request'], effect: 'ratio' },
  rss_bytes: { scale: 'relative', units: ['bytes'], effect: 'ratio' },
};

/** A metric scraped from the arms' /metrics: a Prometheus name, never one of the names Prometheus reserves (`__…`). */
const SCRAPED_NAME = /^(?!__)[A-Za-z_:][A-Za-z0-9_:]{0,199}$/;
const SCRAPED: MetricShape = { scale: 'relative', units: ['per s', 'value'], effect: 'ratio' };
const FANOUT: MetricShape = { scale: 'relative', units: ['calls/request'], effect: 'ratio' };
const QUALIFIER = /^[\x21-\x7e]{1,200}$/;

function shapeOf(name: string): MetricShape | undefined {
  if (Object.hasOwn(FIXED, name)) return FIXED[name];
  const colon = name.indexOf(':');
  if (colon > 0 && QUALIFIER.test(name.slice(colon + 1))) {
    const prefix = name.slice(0, colon);
    if (prefix === 'error_share') return SHARE;
    if (prefix === 'fanout') return FANOUT;
  }
  return SCRAPED_NAME.test(name) ? SCRAPED : undefined;
}

/** Larger than any value a trial measures (bytes, seconds, counts per second), far below where arithmetic breaks. */
const MAX_MAGNITUDE = 1e15;
const MAX_POINTS = 1e12;
const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
/** NaN stands for "undefined" (stored as null); an infinity or a huge number is never a measurement. */
const plausible = (v: number): boolean => Number.isNaN(v) || Math.abs(v) <= MAX_MAGNITUDE;

/** Why a decoded metric cannot be one Tandem computed, or undefined when it can. */
export function implausibility(m: TrialMetric): string | undefined {
  const name = JSON.stringify(m.metric);
  const shape = shapeOf(m.metric);
  if (!shape) return `metric ${name} is not one Tandem computes`;
  if (m.scale !== shape.scale || !shape.units.includes(m.unit))
    return `metric ${name} has scale ${JSON.stringify(m.scale)} and unit ${JSON.stringify(m.unit)}, not its own`;
  if (!Number.isInteger(m.points) || m.points < 0 || m.points > MAX_POINTS) return `metric ${name} has ${m.points} points`;
  const values = [m.control, m.treatment, m.effect, m.low, m.high, ...(m.processes?.control ?? []), ...(m.processes?.treatment ?? [])];
  if (!values.every(plausible)) return `metric ${name} holds a value that is not a finite measurement`;
  if (shape.scale === 'absolute') {
    const inShare = (v: number): boolean => Number.isNaN(v) || (v >= 0 && v <= 1);
    if (!inShare(m.control) || !inShare(m.treatment)) return `metric ${name}: a share outside [0, 1]`;
    if (!close(m.effect, m.treatment - m.control)) return `metric ${name}: its effect ${m.effect} is not its treatment less its control`;
    return undefined;
  }
  if (m.control < 0 || m.treatment < 0 || m.effect < -1) return `metric ${name}: a negative value or an effect below −100%`;
  if (
    shape.effect === 'ratio' &&
    Number.isFinite(m.effect) &&
    !(m.control > 0 && close(m.effect, m.treatment / m.control - 1)) &&
    !(m.control === 0 && m.treatment === 0 && m.effect === 0)
  ) {
    return `metric ${name}: its effect ${m.effect} is not the ratio of its treatment to its control`;
  }
  return undefined;
}
