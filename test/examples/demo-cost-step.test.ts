import { describe, expect, it } from 'vitest';
import { costStep, loadFailedRates } from '../../examples/demo/cost-step.js';
import type { ExperimentStepResult } from '../../examples/demo/experiment-step.js';

/** A judged experiment's result as costStep reads it: the metrics' verdicts, the verdict's trials and decision. */
function result(status: string, regressed: readonly string[]): ExperimentStepResult {
  const metric = (name: string, judged = true) => ({
    metric: name,
    judged,
    verdict: regressed.includes(name) ? 'regression' : 'inconclusive',
    estimate: regressed.includes(name) ? 0.03 : 0.004,
    low: -0.01,
    high: 0.05,
  });
  const metrics = [
    metric('cpu_per_request'),
    metric('latency_shift'),
    metric('latency_p99'),
    metric('rss_bytes'),
    metric('error_share'),
    metric('work_units_per_candidate', false),
  ];
  const report = { metrics, verdict: { decided: true, trials: 9 }, experiment: {} };
  return { id: 'exp-1', status, report, reportPath: '/tmp/r.html', seconds: 55 } as unknown as ExperimentStepResult;
}

describe('the demo’s +5% work step', () => {
  it('is as expected when it regressed on what more work moves, memory included, and names the metric', () => {
    // A CI run's step regressed on a metric beyond CPU and latency and was marked unexpected; two busy demo runs then
    // regressed on rss_bytes alone (+2.1% [+0.6%, +3.7%] after 7 trials).
    const onMemory = costStep(2, '+5% ranking CPU work', result('regressed', ['rss_bytes']), 'regressed');
    expect(onMemory.asExpected).toBe(true);
    expect(onMemory.details).toMatchObject({ regressedOn: ['rss_bytes'] });
    expect(onMemory.keyFigure).toContain('rss_bytes +3.0% [-1.0%, +5.0%] regression');
    expect(costStep(2, '+5% ranking CPU work', result('regressed', ['cpu_per_request', 'latency_p99']), 'regressed').asExpected).toBe(true);
  });

  it('is not as expected when only errors regressed (more work cannot cause them), or when it was not regressed', () => {
    expect(costStep(2, '+5% ranking CPU work', result('regressed', ['error_share']), 'regressed').asExpected).toBe(false);
    expect(costStep(2, '+5% ranking CPU work', result('inconclusive', []), 'regressed').asExpected).toBe(false);
  });
});

describe('a judged step whose trials missed their load', () => {
  /** A step's result with these attempts (as the report lists them). */
  const withTrials = (status: string, trials: readonly { status: string; reason?: string; achievedRate?: number }[]): ExperimentStepResult =>
    ({
      id: 'exp-2',
      status,
      report: {
        metrics: [],
        verdict: { decided: false, trials: 0 },
        experiment: {},
        trials: trials.map((t, attempt) => ({ index: 0, attempt, targetRate: 14, ...t })),
      },
      reportPath: '/tmp/r.html',
      seconds: 40,
    }) as unknown as ExperimentStepResult;
  const loadFailed = (achievedRate: number) => ({
    status: 'replaced',
    reason: `load failed: achieved ${achievedRate.toFixed(1)} of 14 pairs/s (minAchievedShare 0.8)`,
    achievedRate,
  });

  it('gives the achieved rates of the attempts that failed their load, once the experiment failed', () => {
    // The sixteenth host, the probe at 23.6 ms: 14 pairs/s, and every attempt achieved 8.0–10.7 until the replacements ran out.
    const failed = withTrials('failed', [loadFailed(8.0), loadFailed(10.7), loadFailed(9.1), loadFailed(8.8), loadFailed(10.1)]);
    expect(loadFailedRates(failed)).toEqual([8.0, 10.7, 9.1, 8.8, 10.1]);
    // Attempts replaced for another reason (an arm not ready) say nothing about the rate.
    expect(loadFailedRates(withTrials('failed', [{ status: 'replaced', reason: 'arm control not ready within 30s' }, loadFailed(9.5)]))).toEqual([9.5]);
  });

  it('gives none when the experiment did not fail, or failed for another reason', () => {
    // A load failure replaced in time: the experiment went on and decided.
    expect(loadFailedRates(withTrials('passed', [loadFailed(9.0), { status: 'completed', achievedRate: 13.9 }]))).toEqual([]);
    expect(loadFailedRates(withTrials('failed', [{ status: 'failed', reason: 'arm control not ready within 30s' }]))).toEqual([]);
    expect(loadFailedRates(withTrials('cancelled', [loadFailed(9.0)]))).toEqual([]);
  });
});
