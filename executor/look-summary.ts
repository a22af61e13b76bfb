/**
 * What one sequential look found, as stored in a `look` event, shown on the
 * progress line of `tandem run` and in the demo.
 */
import { formatEffect } from '../harness/index.js';

/** One judged metric at a look, as the `look` event stores it (the dashboard's live panel reads the same). */
export interface LookMetric {
  readonly metric: string;
  readonly critical: boolean;
  readonly verdict: string;
  readonly estimate: number;
  readonly low: number;
  readonly high: number;
  readonly scale: 'relative' | 'absolute';
  readonly threshold?: number;
  /** What the metric's noise allows (MetricVerdict.forecast). */
  readonly forecast?: { readonly trialsForThreshold: number; readonly resolvableAtMax: number; readonly maxTrials: number };
}

export interface LookSummary {
  readonly experimentId: string;
  readonly trials: number;
  readonly decided: boolean;
  readonly outcome: string;
  readonly metrics: readonly LookMetric[];
  /** Wall time per completed trial so far, starts included. */
  readonly secondsPerTrial?: number;
}

/** "about 24 trials (about 4.4 min)": a count, and the wall time it takes at this run's pace. */
function trialsAndTime(trials: number, secondsPerTrial: number | undefined): string {
  if (secondsPerTrial === undefined || !(secondsPerTrial > 0)) return `about ${trials} trials`;
  const seconds = trials * secondsPerTrial;
  return `about ${trials} trials (about ${seconds < 120 ? `${Math.round(seconds)} s` : `${(seconds / 60).toFixed(1)} min`})`;
}

/**
 * What the critical metrics' noise allows, in words, for the first look and every undecided one: "at this noise
 * cpu_per_request's ±2.00% needs about 24 trials (about 4.4 min); the design's 30 resolve +1.63%".
 */
export function formatNoiseForecast(look: LookSummary): string | undefined {
  const parts = look.metrics
    .filter((m) => m.critical && m.forecast && m.threshold !== undefined && m.verdict !== 'regression')
    .map(
      (m) =>
        `${m.metric}'s ${formatEffect(m.threshold!, m.scale).replace(/^\+/, '±')} needs ${trialsAndTime(m.forecast!.trialsForThreshold, look.secondsPerTrial)}; the design's ${m.forecast!.maxTrials} resolve ${formatEffect(m.forecast!.resolvableAtMax, m.scale)}`,
    );
  return parts.length > 0 ? `at this noise ${parts.join('; ')}` : undefined;
}

/** One line per look: each critical metric's estimate and interval, and whether the judge is done. */
export function formatLook(look: LookSummary): string {
  const critical = look.metrics.filter((m) => m.critical);
  const parts = (critical.length > 0 ? critical : look.metrics).map(
    (m) => `${m.metric} ${formatEffect(m.estimate, m.scale)} [${formatEffect(m.low, m.scale)}, ${formatEffect(m.high, m.scale)}] ${m.verdict}`,
  );
  const forecast = look.decided ? undefined : formatNoiseForecast(look);
  return `after ${look.trials} trial(s): ${parts.join('; ')} → ${look.decided ? `decided: ${look.outcome}` : 'undecided, next trial'}${forecast ? ` (${forecast})` : ''}`;
}
