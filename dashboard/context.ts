/**
 * What the dashboard is given by `tandem serve` (cli/ composes the store, the
 * queue and the report; the dashboard builds none of them).
 */
import type { Clock, ExperimentRecord, LatticeConfig, WorkloadConfig } from '../core/index.js';
import type { ExperimentReport } from '../harness/index.js';
import type { Store } from '../store/index.js';

export interface DashboardActions {
  /** What happened, in words (removed from the queue, sent to its worker, already finished…); undefined for an unknown id. */
  cancel(id: string, reason: string): Promise<string | undefined>;
  /** Submit an A/A calibration of the workload; its experiment id. */
  calibrate(workload: string): Promise<{ id: string; deduplicated: boolean }>;
}

export interface DashboardContext {
  readonly store: Store;
  readonly clock: Clock;
  readonly workloads: readonly WorkloadConfig[];
  readonly lattices: readonly LatticeConfig[];
  workload(name: string): WorkloadConfig | undefined;
  /** The report of a finished experiment, judged as `tandem report` judges it. */
  report(record: ExperimentRecord): Promise<ExperimentReport>;
  /** Present only when a bearer token was configured: without one the dashboard is read-only. */
  readonly actions?: DashboardActions;
  /** Where a server-side failure's details go (the operator's terminal), since the page a visitor sees does not show them. */
  readonly log?: (line: string) => void;
}
