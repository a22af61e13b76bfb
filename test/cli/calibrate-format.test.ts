import { describe, expect, it } from 'vitest';
import { formatCalibration } from '../../cli/commands/calibrate.js';
import type { Calibration } from '../../harness/index.js';

describe('tandem calibrate, as a person reads it', () => {
  it('shows the FPR with its interval, the serial-correlation warning, where the noise comes from and what each change size needs, in time', () => {
    const calibration: Calibration = {
      experimentId: 'exp-aa',
      workload: 'ranking',
      createdAtMs: 0,
      trials: 40,
      design: { minTrials: 4, maxTrials: 12 },
      subsets: 1_000,
      falsePositiveRate: 0.012,
      falsePositiveInterval: { low: 0.0069, high: 0.0208 },
      anyMetricFlaggedRate: 0.02,
      metrics: {
        cpu_per_request: {
          sd: 0.02,
          typicalSd: 0.018,
          df: 38,
          trials: 40,
          noiseFloor: 0.03,
          slotBias: { estimate: 0.001, low: -0.01, high: 0.012, pValue: 0.8 },
          falsePositiveRate: 0.01,
          meanEffect: 0,
          autocorrelation: 0.4,
          autocorrelationSe: 0.16,
          warning: 'trials are serially correlated (lag-1 autocorrelation 0.40 ± 0.16)',
          varianceSplit: { betweenProcesses: 0.03 ** 2, betweenTrials: 0.02 ** 2, withinTrial: 0, processes: 3 },
          plan: [
            { change: 0.01, trials: 120 },
            { change: 0.02, trials: 31 },
            { change: 0.05, trials: 6 },
          ],
        },
      },
    };
    const text = formatCalibration(calibration, 10).join('\n');
    expect(text).toContain('false-positive rate of the judge: 1.2% [0.7%, 2.1%] called regressed');
    expect(text).toContain('1,000 sequential A/A experiments simulated from them');
    expect(text).toContain('warning: cpu_per_request: trials are serially correlated');
    expect(text).toContain('noise between processes of one arm 3.0%, between trials 2.0%, within a trial 0.0% (sd, 3 process(es) per arm)');
    expect(text).toContain('1.0%: 120 trials (about 20 min), 2.0%: 31 trials (about 6 min), 5.0%: 6 trials (about 1 min)');
    expect(text).toContain("processes of one arm differ more than trials do: look at the report's Processes section");
  });

  it('suggests several processes per arm when one process per arm leaves a few trials far from the rest', () => {
    const base = {
      sd: 0.06,
      typicalSd: 0.02,
      df: 38,
      trials: 40,
      noiseFloor: 0.1,
      slotBias: { estimate: 0, low: -0.01, high: 0.01, pValue: 0.9 },
      falsePositiveRate: 0,
      meanEffect: 0,
      varianceSplit: { betweenProcesses: 0, betweenTrials: 0.0036, withinTrial: 0, processes: 1 },
      plan: [{ change: 0.05, trials: 40 }],
    };
    const calibration: Calibration = {
      experimentId: 'exp-aa',
      workload: 'ranking',
      createdAtMs: 0,
      trials: 40,
      design: { minTrials: 4, maxTrials: 12 },
      subsets: 10,
      falsePositiveRate: 0,
      anyMetricFlaggedRate: 0,
      metrics: { cpu_per_request: base },
    };
    expect(formatCalibration(calibration).join('\n')).toContain('a few trials lie far from the rest (sd 6.0% against a typical 2.0%)');
    const even: Calibration = { ...calibration, metrics: { cpu_per_request: { ...base, typicalSd: 0.055 } } };
    expect(formatCalibration(even).join('\n')).not.toContain('far from the rest');
  });
});
