/**
 * A/A experiments simulated from one measured A/A run, for the calibration's false-positive rate: as many
 * independent sequential experiments as wanted, each built from the run's own residuals (so heavy tails,
 * bimodal processes and the metrics' correlation with each other are as measured), never from a Gaussian
 * model. Under A/A the arms are exchangeable, so a residual is as likely with either sign: each draw gets a
 * random one (a sign-flip bootstrap). The measured slot bias is added back by the trial's slot, and the
 * measured lag-1 autocorrelation is imposed as AR(1), so drift is in the simulation when it was in the run.
 */
import type { EffectScale, TrialMetric } from '../metrics/trial-metrics.js';
import { fromInference } from '../metrics/effect-scale.js';

/** One metric's A/A run, reduced to what the simulation draws from. */
export interface AaResiduals {
  readonly metric: string;
  readonly scale: EffectScale;
  readonly slotBias: number;
  /** Imposed on the simulated trials (≥ 0). */
  readonly autocorrelation: number;
  /** On the inference scale, already scaled up for the degrees of freedom the fit used. */
  readonly residuals: readonly number[];
  /** The A/A run's rows, in trial order (their arm values and point counts are reused). */
  readonly rows: readonly TrialMetric[];
}

/** One simulated sequential A/A experiment of `trials` trials: each trial's metrics, in order. */
export function resampledAaExperiment(
  sets: readonly AaResiduals[],
  trials: number,
  slotSigns: ReadonlyMap<number, number>,
  random: () => number,
): TrialMetric[][] {
  const length = Math.min(...sets.map((s) => s.residuals.length));
  const previous = sets.map(() => 0);
  const experiment: TrialMetric[][] = [];
  for (let t = 0; t < trials; t++) {
    // One A/A trial for every metric, one sign for every metric: the metrics keep their joint law.
    const u = Math.floor(random() * length);
    const sign = random() < 0.5 ? -1 : 1;
    const slot = slotSigns.get(t) ?? 0;
    experiment.push(
      sets.map((set, m) => {
        const rho = set.autocorrelation;
        const innovation = sign * set.residuals[u]!;
        const noise = t === 0 ? innovation : rho * previous[m]! + Math.sqrt(1 - rho * rho) * innovation;
        previous[m] = noise;
        const effect = fromInference(set.slotBias * slot + noise, set.scale);
        const row = set.rows[u]!;
        const control = row.control;
        const treatment = set.scale === 'relative' ? control * (1 + effect) : control + effect;
        return {
          metric: set.metric,
          trial: t,
          control,
          treatment,
          effect,
          low: Number.NaN,
          high: Number.NaN,
          points: row.points,
          scale: set.scale,
          unit: row.unit,
        };
      }),
    );
  }
  return experiment;
}
