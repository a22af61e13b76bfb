/**
 * The word a report leads with, shared by every format: the verdict's outcome, or, for an experiment
 * that was cancelled or failed before a verdict, that status — never a verdict built from partial data.
 */
import type { ExperimentReport } from '../checks/evaluate.js';

export interface Headline {
  readonly word: string;
  readonly tone: 'good' | 'bad' | 'warn';
  /** For a stopped experiment: why, and what its numbers are. */
  readonly stoppedBanner?: string;
}

export function headlineOf(report: ExperimentReport): Headline {
  const { verdict, stopped } = report;
  if (stopped) {
    const status = stopped.status === 'cancelled' ? 'Cancelled' : 'Failed';
    return {
      word: stopped.status,
      tone: 'bad',
      stoppedBanner: `${status}: ${stopped.reason}. No verdict: what ${stopped.trialsMeasured} trial(s) measured before it stopped is below, not judged.`,
    };
  }
  return {
    word: verdict.outcome,
    tone: verdict.outcome === 'passed' && !verdict.inconclusivePolicy ? 'good' : verdict.outcome === 'regressed' ? 'bad' : 'warn',
  };
}
