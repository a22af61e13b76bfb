/**
 * What an A/A calibration stored for a workload, as the judge reads it: its own
 * file so the judge (verdict.ts) and the calibration that runs the judge
 * (calibration.ts) do not import each other.
 */
export interface MetricCalibration {
  /** Between-trial sd of the A/A per-trial effects once the slot bias is removed. */
  readonly sd: number;
  /** Degrees of freedom of `sd` (trials − 2 with slots: the mean and the slot bias were estimated). */
  readonly df: number;
  readonly trials: number;
  /** Noise floor: the smallest regression the judge calls with 80% probability at the design's maximum trials. */
  readonly noiseFloor: number;
  /** Effect seen when the "treatment" copy runs in slot A rather than the average (per trial: effect = bias × sign). */
  readonly slotBias: { readonly estimate: number; readonly low: number; readonly high: number; readonly pValue: number };
  /** Share of sequential A/A runs in which this metric was called a regression or an improvement. */
  readonly falsePositiveRate: number;
  /** Mean A/A effect (should be ~0). */
  readonly meanEffect: number;
}

export interface Calibration {
  readonly experimentId: string;
  readonly workload: string;
  readonly createdAtMs: number;
  /** Trials in the A/A run. */
  readonly trials: number;
  /** The design the false-positive rate was measured for. */
  readonly design: { readonly minTrials: number; readonly maxTrials: number };
  readonly subsets: number;
  /** Share of sequential A/A runs called regressed (what a CI gate would have failed). */
  readonly falsePositiveRate: number;
  /** Share of sequential A/A runs in which any judged metric was called a regression or an improvement. */
  readonly anyMetricFlaggedRate: number;
  readonly metrics: Readonly<Record<string, MetricCalibration>>;
}
