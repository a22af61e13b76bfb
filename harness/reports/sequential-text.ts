/** How the trials of a report were judged, in words, for every renderer. */
import type { ExperimentReport } from '../evaluate.js';

/** "sequential, looks after trials 4 to 12, decided after 6" or "fixed horizon". */
export function sequentialText(report: ExperimentReport): string {
  const { design, decided, trials } = report.verdict;
  if (design.minTrials >= design.maxTrials) return `fixed horizon of ${design.maxTrials}`;
  return `sequential: a look after each trial from ${design.minTrials} to ${design.maxTrials}; ${decided ? `decided after ${trials}` : `undecided after ${trials}`}`;
}
