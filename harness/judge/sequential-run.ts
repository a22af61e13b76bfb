/**
 * The sequential judge as an experiment meets it: a look after each trial
 * from the design's minimum on, stopping at the first look whose verdict is
 * decided. The executor does the same look by look as trials complete; this
 * replays it over trials already in hand (calibration subsets, benchmarks).
 */
import type { TrialMetric } from '../metrics/trial-metrics.js';
import { judge, type ExperimentVerdict, type JudgeOptions } from './verdict.js';

export interface SequentialRun {
  readonly verdict: ExperimentVerdict;
  /** Trials used when the judge stopped. */
  readonly trials: number;
}

/** Judge `trials` (each trial's metrics, in the order they completed) look by look under `options.design`. */
export function judgeSequentially(
  trials: readonly (readonly TrialMetric[])[],
  options: JudgeOptions & { readonly design: NonNullable<JudgeOptions['design']> },
): SequentialRun {
  return lookByLook(trials, options.design, (metrics) => judge(metrics, options));
}

/** The looks of any judge (the verdict bench runs its baselines through the same loop): stop at the first decided one. */
export function lookByLook<V extends { readonly decided: boolean }>(
  trials: readonly (readonly TrialMetric[])[],
  design: { readonly minTrials: number; readonly maxTrials: number },
  judgeAt: (metrics: TrialMetric[]) => V,
): { readonly verdict: V; readonly trials: number } {
  const last = Math.min(trials.length, design.maxTrials);
  const first = Math.min(Math.max(2, design.minTrials), last);
  let verdict: V | undefined;
  for (let n = first; n <= last; n++) {
    verdict = judgeAt(trials.slice(0, n).flat());
    if (verdict.decided) return { verdict, trials: n };
  }
  return { verdict: verdict ?? judgeAt(trials.flat()), trials: last };
}
