import { describe, expect, it } from 'vitest';
import { costStep } from '../../examples/demo/run-demo.js';
import type { ExperimentStepResult } from '../../examples/demo/experiment-step.js';

/** A judged experiment's result as costStep reads it: the metrics' verdicts, the verdict's trials and decision. */
function result(status: string, regressed: readonly string[]): ExperimentStepResult {
  const metric = (name: string, judged = true) => ({ metric: name, judged, verdict: regressed.includes(name) ? 'regression' : 'inconclusive', estimate: regressed.includes(name) ? 0.03 : 0.004, low: -0.01, high: 0.05 });
  const metrics = [metric('cpu_per_request'), metric('latency_shift'), metric('latency_p99'), metric('rss_bytes'), metric('error_share'), metric('work_units_per_candidate', false)];
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
