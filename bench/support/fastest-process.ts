/**
 * The judge's per-trial rows as Tandem took them until 2026-12-07: an arm's CPU per request and latency were its
 * fastest process's (harness/metrics/trial-metrics.ts now takes their mean). Recomputed from the per-process values each
 * row keeps, so the verdict bench can judge the same experiments both ways.
 */
import type { TrialMetric } from '../../harness/index.js';

const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

/** Each arm's fastest process against its processes' mean, on the log scale, from levels relative to their log mean. */
const fastestLessFleet = (levels: readonly number[]): number => Math.log(1 + Math.min(...levels)) - Math.log(mean(levels.map((r) => 1 + r)));

export function fastestProcessRows(rows: readonly TrialMetric[]): TrialMetric[] {
  return rows.map((row) => {
    const p = row.processes;
    if (!p || p.control.length === 0 || p.treatment.length === 0) return row;
    if (row.metric === 'cpu_per_request') {
      const control = Math.min(...p.control);
      const treatment = Math.min(...p.treatment);
      return { ...row, control, treatment, effect: treatment / control - 1 };
    }
    if (row.metric === 'latency_shift') {
      // The row's shift is between the arms' fleet levels; the fastest processes differ from them by these offsets.
      const shift = Math.log1p(row.effect) + fastestLessFleet(p.treatment) - fastestLessFleet(p.control);
      return { ...row, effect: Math.expm1(shift) };
    }
    return row;
  });
}
