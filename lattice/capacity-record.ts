/**
 * A capacity test as an experiment record: the timeline as samples (one
 * series per figure, arm `capacity`), the verdict against the lattice's
 * quality target on the record. Used by `tandem capacity` and `tandem demo`.
 */
import type { Clock, LatticeConfig } from '../core/index.js';
import type { Store } from '../store/index.js';
import type { CapacityBucket, CapacityProfile, CapacitySummary } from './capacity-test.js';

/** Within the scenario's quality target: NDCG loss and no-result share both at or under it. */
export function withinQualityTarget(summary: CapacitySummary, lattice: LatticeConfig): boolean {
  return summary.maxQualityLoss <= lattice.qualityTarget.maxNdcgLoss && summary.maxNoResultShare <= lattice.qualityTarget.maxNoResultShare;
}

export interface CapacityRecord {
  readonly experimentId: string;
  readonly workload: string;
  readonly lattice: LatticeConfig;
  readonly profile: CapacityProfile;
  readonly bucketMs: number;
  readonly buckets: readonly CapacityBucket[];
  readonly summary: CapacitySummary;
  readonly coordinated: boolean;
  readonly ok: boolean;
}

export async function storeCapacityTest(store: Store, record: CapacityRecord, clock: Clock): Promise<void> {
  const { experimentId, lattice, buckets, bucketMs } = record;
  const createdAtMs = clock.now();
  const stateIndex = (state: string | undefined): number => (state !== undefined ? lattice.states.findIndex((s) => s.name === state) : Number.NaN);
  const samples = buckets.flatMap((b) =>
    (
      [
        ['target_rate', b.targetRate],
        ['sent', b.sent],
        ['errors', b.errors],
        ['quality', b.quality],
        ['stability', b.stability],
        ['no_result_share', b.noResultShare],
        ['lattice_state', stateIndex(b.state)],
        ['product_load_factor', b.productLoadFactor ?? Number.NaN],
      ] as const
    )
      .filter(([, v]) => Number.isFinite(v))
      .map(([metric, value]) => ({ experimentId, trial: 0, arm: 'capacity', metric, timeMs: createdAtMs - buckets.length * bucketMs + b.startMs, value })),
  );
  await store.samples.append(samples);
  await store.experiments.put({
    id: experimentId,
    workload: record.workload,
    status: record.ok ? 'passed' : 'regressed',
    createdAtMs,
    updatedAtMs: createdAtMs,
    seed: 0,
    spec: { kind: 'capacity', lattice: lattice.name, profile: record.profile, bucketMs, coordinated: record.coordinated },
    trials: [],
    verdict: { outcome: record.ok ? 'passed' : 'regressed', summary: record.summary },
  });
}
