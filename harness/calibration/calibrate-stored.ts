/**
 * The A/A calibration of a stored A/A experiment: its trials' stored metrics
 * (no outcome is read) calibrated against the workload's design. One place
 * for `tandem calibrate` and the executor's `aa` experiments.
 */
import type { ExperimentRecord, WorkloadConfig } from '../../core/index.js';
import type { Store } from '../../store/index.js';
import { calibrate } from './calibration.js';
import type { Calibration } from '../judge/calibration-result.js';
import { deployedArmsOf, loadExperimentData } from '../metrics/experiment-data.js';
import { metricPolicies } from '../metrics/metric-policy.js';

export async function calibrateStored(
  store: Pick<Store, 'experiments' | 'outcomes' | 'samples'>,
  experimentId: string,
  options: { readonly workload: WorkloadConfig; readonly createdAtMs: number; readonly subsets?: number; readonly processes?: number },
): Promise<{ record: ExperimentRecord; calibration: Calibration }> {
  const { workload } = options;
  const data = await loadExperimentData(store, experimentId, { resamples: 0 });
  const calibration = calibrate(data.metrics, {
    experimentId,
    workload: workload.name,
    createdAtMs: options.createdAtMs,
    policies: metricPolicies(workload.checks, { deployedArms: deployedArmsOf(data.slotSigns) }),
    slotSigns: data.slotSigns,
    design: { minTrials: workload.trials.min, maxTrials: workload.trials.max },
    seed: data.record.seed,
    alpha: workload.harness.alpha,
    minPoints: workload.harness.minPoints,
    ...(options.subsets !== undefined ? { subsets: options.subsets } : {}),
    ...(options.processes !== undefined ? { processes: options.processes } : {}),
  });
  return { record: data.record, calibration };
}
