/**
 * What an A/A calibration stored for a workload, as the judge reads it: its own
 * file so the judge (verdict.ts) and the calibration that runs the judge
 * (calibration.ts) do not import each other.
 */
export interface MetricCalibration {
  /** Between-trial sd of the A/A per-trial effects once the slot bias is removed (log scale for ratio metrics). */
  readonly sd: number;
  /**
   * The typical trial's noise: the median absolute residual scaled to an sd (1.4826·MAD), at most `sd`. Rare
   * outlier trials inflate `sd` but not this; the verdict never judges with a standard error below it.
   */
  readonly typicalSd?: number;
  /** Degrees of freedom of `sd` (trials − 2 with slots: the mean and the slot bias were estimated). */
  readonly df: number;
  readonly trials: number;
  /** Noise floor: the smallest regression the judge calls with 80% probability at the design's maximum trials. */
  readonly noiseFloor: number;
  /** Effect seen when the "treatment" copy runs in slot A rather than the average (per trial: effect = bias × sign). */
  readonly slotBias: { readonly estimate: number; readonly low: number; readonly high: number; readonly pValue: number };
  /** Share of simulated sequential A/A experiments in which this metric was called a regression or an improvement. */
  readonly falsePositiveRate: number;
  /** Mean A/A effect (should be ~0; log scale for ratio metrics). */
  readonly meanEffect: number;
  /**
   * Lag-1 autocorrelation of the A/A trials in the order they ran (slot bias removed, small-sample bias
   * corrected): drift that persists from trial to trial. Later verdicts of the workload widen their intervals
   * by it. Absent in calibrations of older releases.
   */
  readonly autocorrelation?: number;
  /** Its standard error (about 1/√trials): a value beyond twice it, and above 0.1, is material. */
  readonly autocorrelationSe?: number;
  /** The variance split (Kalibera & Jones 2013): between processes of one arm, between trials, within a trial. */
  readonly varianceSplit?: VarianceSplit;
  /** Trials a change of each size needs at this noise (a clean change passes within it, twice it is called). */
  readonly plan?: readonly TrialsPlan[];
  /** Set when the trials are materially serially correlated: what that costs and where to look. */
  readonly warning?: string;
}

export interface TrialsPlan {
  /** Relative change, e.g. 0.02. */
  readonly change: number;
  /** Infinity when more than 1,000. */
  readonly trials: number;
}

/**
 * Where one metric's noise comes from, as variances on the metric's inference scale. `betweenProcesses`: how
 * much fresh processes of one build differ (what more processes per arm remove); `betweenTrials`: what is
 * left of a trial's effect beyond its processes and requests (what more trials average); `withinTrial`: the
 * sampling noise of one process's value from its requests.
 */
export interface VarianceSplit {
  readonly betweenProcesses: number;
  readonly betweenTrials: number;
  readonly withinTrial: number;
  /** Processes per arm in the A/A run. */
  readonly processes: number;
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
  /** Share of simulated sequential A/A experiments called regressed (what a CI gate would have failed). */
  readonly falsePositiveRate: number;
  /** Its 95% (Wilson) interval over `subsets` experiments; absent in calibrations of older releases. */
  readonly falsePositiveInterval?: { readonly low: number; readonly high: number };
  /** Share of sequential A/A runs in which any judged metric was called a regression or an improvement. */
  readonly anyMetricFlaggedRate: number;
  readonly metrics: Readonly<Record<string, MetricCalibration>>;
}

/** A lag-1 autocorrelation beyond twice its standard error and above 0.1: worth a warning, and allowed for by the judge. */
export const isMaterialAutocorrelation = (rho: number, standardError: number): boolean => rho > 0.1 && rho > 2 * standardError;
