/** How the trials of a report were judged, in words, for every renderer. */
import type { ExperimentReport } from '../checks/evaluate.js';

/** "sequential, looks after trials 4 to 12, decided after 6" or "fixed horizon". */
export function sequentialText(report: ExperimentReport): string {
  const { design, decided, trials } = report.verdict;
  if (design.minTrials >= design.maxTrials) return `fixed horizon of ${design.maxTrials}`;
  return `sequential: a look after each trial from ${design.minTrials} to ${design.maxTrials}; ${decided ? `decided after ${trials}` : `undecided after ${trials}`}`;
}

/**
 * The heading of a metrics table's interval column: the verdict's intervals are its confidence sequence at
 * level 1 − α (harness/judge/verdict.ts), so a workload judged at α = 0.01 shows 99% intervals, not 95% ones.
 */
export function intervalHeading(alpha: number): string {
  if (!(alpha > 0 && alpha < 1)) return 'interval';
  // 0.01 → "99", 0.001 → "99.9", 0.05 → "95": rounded to four decimals (no float noise), trailing zeros dropped.
  return `${Number(((1 - alpha) * 100).toFixed(4))}% CI`;
}
