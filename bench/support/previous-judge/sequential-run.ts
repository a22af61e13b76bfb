/**
 * The sequential judge as an experiment meets it: a look after each trial
 * from the design's minimum on, stopping at the first look whose verdict is
 * decided. The executor does the same look by look as trials complete; this
 * replays it over trials already in hand (calibration subsets, benchmarks).
 */
import type { TrialMetric } from '../../../harness/trial-metrics.js';
import { judge, type ExperimentVerdict, type JudgeOptions } from './verdict.js';

export interface SequentialRun {
  readonly verdict: ExperimentVerdict;
  /** Trials used when the judge stopped. */
  readonly trials: number;
}

/** Judge `trials` (each trial's metrics, in the order they completed) look by look under `options.design`. */
export function judgeSequentially(trials: readonly (readonly TrialMetric[])[], options: JudgeOptions & { readonly design: NonNullable<JudgeOptions['design']> }): SequentialRun {
  const last = Math.min(trials.length, options.design.maxTrials);
  const first = Math.min(Math.max(2, options.design.minTrials), last);
  let verdict: ExperimentVerdict | undefined;
  for (let n = first; n <= last; n++) {
    verdict = judge(trials.slice(0, n).flat(), options);
    if (verdict.decided) return { verdict, trials: n };
  }
  return { verdict: verdict ?? judge(trials.flat(), options), trials: last };
}
