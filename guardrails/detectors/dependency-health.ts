/**
 * Dependency-health detector (FIRE §4.2): reads a dependency's own Prometheus
 * counters or gauges, compares them with the baseline captured when
 * monitoring started (increase, or rate per second) or takes the value as it
 * is, and reports a violation when the result is above the rule's limit.
 */
import { ConfigError, parsePrometheusText, type Clock, type DetectorConfig } from '../../core/index.js';
import { scheduleOf, type CheckResult, type Detector } from '../monitor.js';
import { SharedSource } from '../shared-source.js';

/** Sum of the samples of `metric` whose labels include `labels`; undefined when there are none. */
async function readMetric(
  shared: SharedSource,
  source: string,
  maxAgeMs: number,
  metric: string,
  labels: Readonly<Record<string, string>>,
): Promise<number | undefined> {
  const text = await shared.read(source, maxAgeMs);
  const matching = parsePrometheusText(text).samples.filter((s) => s.name === metric && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return matching.length === 0 ? undefined : matching.reduce((sum, s) => sum + s.value, 0);
}

/** `shared` lets detectors of concurrent experiments share one scrape per source and interval. */
export function dependencyHealthDetector(config: DetectorConfig, clock: Clock, shared: SharedSource = new SharedSource(clock)): Detector {
  const metric = config.rule.metric;
  if (metric === undefined) throw new ConfigError([`detectors.${config.name}.rule.metric: a dependency-health detector needs rule.metric`]);
  let baseline: number | null = null;
  let baselineMs = 0;
  return {
    ...scheduleOf(config),
    async prime() {
      // The baseline is read fresh (maxAge 0): it must be this experiment's own starting point.
      baseline = (await readMetric(shared, config.source, 0, metric, config.rule.labels)) ?? 0;
      baselineMs = clock.now();
    },
    async check(): Promise<CheckResult> {
      const value = await readMetric(shared, config.source, config.interval, metric, config.rule.labels);
      if (value === undefined) return { verdict: 'error', value: null, baseline, message: `no ${metric} at ${config.source}` };
      const base = baseline ?? 0;
      const compared =
        config.rule.compare === 'value'
          ? value
          : config.rule.compare === 'increase'
            ? value - base
            : (value - base) / Math.max(0.001, (clock.now() - baselineMs) / 1000);
      return {
        verdict: compared > config.rule.above ? 'violation' : 'clear',
        value: compared,
        baseline: base,
        message: `${metric} ${config.rule.compare} ${compared} (limit ${config.rule.above})`,
      };
    },
  };
}
