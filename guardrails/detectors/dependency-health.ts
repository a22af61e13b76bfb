/**
 * Dependency-health detector (FIRE §4.2): reads a dependency's own Prometheus
 * counters or gauges, compares them with the baseline captured when
 * monitoring started (increase, or rate per second) or takes the value as it
 * is, and reports a violation when the result is above the rule's limit.
 */
import { request } from 'undici';
import { parsePrometheusText, type Clock, type DetectorConfig } from '../../core/index.js';
import type { CheckResult, Detector } from '../monitor.js';

/** Sum of the samples of `metric` whose labels include `labels`; undefined when there are none. */
async function readMetric(source: string, metric: string, labels: Readonly<Record<string, string>>): Promise<number | undefined> {
  const response = await request(source, { headersTimeout: 5_000, bodyTimeout: 5_000 });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`${source} answered ${response.statusCode}`);
  const matching = parsePrometheusText(text).samples.filter((s) => s.name === metric && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return matching.length === 0 ? undefined : matching.reduce((sum, s) => sum + s.value, 0);
}

export function dependencyHealthDetector(config: DetectorConfig, clock: Clock): Detector {
  const metric = config.rule.metric;
  if (metric === undefined) throw new Error(`detector ${config.name}: a dependency-health detector needs rule.metric`);
  let baseline: number | null = null;
  let baselineMs = 0;
  return {
    name: config.name,
    warmupMs: config.warmup,
    intervalMs: config.interval,
    consecutive: config.consecutive,
    maxDurationMs: config.maxDuration,
    maxErrors: config.maxErrors,
    onUnavailable: config.onUnavailable,
    async prime() {
      baseline = (await readMetric(config.source, metric, config.rule.labels)) ?? 0;
      baselineMs = clock.now();
    },
    async check(): Promise<CheckResult> {
      const value = await readMetric(config.source, metric, config.rule.labels);
      if (value === undefined) return { verdict: 'error', value: null, baseline, message: `no ${metric} at ${config.source}` };
      const base = baseline ?? 0;
      const compared =
        config.rule.compare === 'value' ? value : config.rule.compare === 'increase' ? value - base : (value - base) / Math.max(0.001, (clock.now() - baselineMs) / 1000);
      return {
        verdict: compared > config.rule.above ? 'violation' : 'clear',
        value: compared,
        baseline: base,
        message: `${metric} ${config.rule.compare} ${compared} (limit ${config.rule.above})`,
      };
    },
  };
}
