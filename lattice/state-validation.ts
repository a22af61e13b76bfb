/**
 * Candidate state validation (HiLO §3.5 test hooks): each state is run as a
 * paired experiment of the same build — control untagged (L0), treatment
 * tagged with the test-scenario header that forces the state's levels on that
 * traffic only — and measured for capacity reclaimed and quality lost. The
 * lattice's promise is then checked: capacity reclaimed grows and quality
 * falls monotonically with the state, and no state loses more quality than
 * the target allows.
 */
import type { LatticeConfig } from '../core/index.js';
import type { ExperimentReport } from '../harness/index.js';

/** The test-scenario header value forcing a state's levels: `ranking=2,prediction=1`. */
export function levelsHeaderValue(levels: Readonly<Record<string, number>>): string {
  return Object.entries(levels)
    .map(([service, level]) => `${service}=${level}`)
    .join(',');
}

export interface StateMeasurement {
  readonly state: string;
  readonly experimentId: string;
  /**
   * Relative reduction of the capacity measure, positive when reclaimed: downstream calls per request
   * when the router counted them (exact), else CPU per arm (deployed arms), else the per-request latency shift.
   */
  readonly capacityReclaimed: number;
  readonly capacityMeasure: 'calls' | 'cpu_per_request' | 'latency_shift';
  readonly capacityInterval: readonly [number, number];
  /** Relative reduction of calls per request to each dependency (router counters), when the router ran. */
  readonly callReduction: Readonly<Record<string, number>>;
  /** 1 − mean NDCG@k of the state's ranked lists against L0's. */
  readonly ndcgLoss: number;
  readonly noResultShare: number;
}

export interface StateValidation {
  readonly lattice: string;
  readonly states: readonly StateMeasurement[];
  readonly checks: readonly { readonly name: string; readonly ok: boolean; readonly detail: string }[];
  readonly ok: boolean;
}

/** What one state's experiment report says about capacity and quality. */
export function measureState(state: string, report: ExperimentReport): StateMeasurement {
  const metric = (name: string) => report.metrics.find((m) => m.metric === name && Number.isFinite(m.estimate));
  const callReduction: Record<string, number> = {};
  for (const m of report.metrics)
    if (m.metric.startsWith('fanout:') && Number.isFinite(m.estimate)) callReduction[m.metric.slice('fanout:'.length)] = -m.estimate;
  const ranking = report.comparison?.ranking;
  // Unattributed fan-out (null: the service does not forward the record id) counts as no evidence.
  const calls = (arm: string): number => report.fanout.filter((f) => f.arm === arm).reduce((sum, f) => sum + (f.fanOut ?? 0), 0);
  const controlCalls = calls('control');
  const cpu = metric('cpu_per_request');
  // Exact call counts decide when a state changes how often the service calls out; otherwise its own CPU does.
  if (controlCalls > 0 && Math.abs(1 - calls('treatment') / controlCalls) > 1e-9) {
    const reclaimed = 1 - calls('treatment') / controlCalls;
    return {
      state,
      experimentId: report.experiment.id,
      capacityReclaimed: reclaimed,
      capacityMeasure: 'calls',
      capacityInterval: [reclaimed, reclaimed],
      callReduction,
      ndcgLoss: ranking ? 1 - ranking.ndcg.mean : Number.NaN,
      noResultShare: ranking ? ranking.noResultShare.treatment : Number.NaN,
    };
  }
  const capacity = cpu ?? metric('latency_shift');
  return {
    state,
    experimentId: report.experiment.id,
    capacityReclaimed: capacity ? -capacity.estimate : Number.NaN,
    capacityMeasure: cpu ? 'cpu_per_request' : 'latency_shift',
    capacityInterval: capacity ? [-capacity.high, -capacity.low] : [Number.NaN, Number.NaN],
    callReduction,
    ndcgLoss: ranking ? 1 - ranking.ndcg.mean : Number.NaN,
    noResultShare: ranking ? ranking.noResultShare.treatment : Number.NaN,
  };
}

/** Check the lattice's promise over the measured states (ordered as in the lattice). */
export function checkPromise(lattice: LatticeConfig, states: readonly StateMeasurement[], tolerance = 0.005): StateValidation {
  const checks: StateValidation['checks'][number][] = [];
  const ordered = lattice.states.map((s) => states.find((m) => m.state === s.name)).filter((m): m is StateMeasurement => m !== undefined);
  for (let i = 1; i < ordered.length; i++) {
    const [a, b] = [ordered[i - 1]!, ordered[i]!];
    // A state measured as reclaiming less than the one before it by more than the noise breaks the promise.
    const capacityOk = !(b.capacityReclaimed < a.capacityReclaimed - Math.max(tolerance, (a.capacityInterval[1] - a.capacityInterval[0]) / 2));
    checks.push({
      name: `capacity ${a.state} <= ${b.state}`,
      ok: capacityOk,
      detail: `${(a.capacityReclaimed * 100).toFixed(1)}% then ${(b.capacityReclaimed * 100).toFixed(1)}% (${b.capacityMeasure})`,
    });
    const qualityOk = !(b.ndcgLoss < a.ndcgLoss - tolerance);
    checks.push({ name: `quality ${a.state} >= ${b.state}`, ok: qualityOk, detail: `NDCG loss ${a.ndcgLoss.toFixed(4)} then ${b.ndcgLoss.toFixed(4)}` });
  }
  for (const s of ordered) {
    checks.push({
      name: `${s.state} quality within target`,
      ok: s.ndcgLoss <= lattice.qualityTarget.maxNdcgLoss,
      detail: `NDCG loss ${s.ndcgLoss.toFixed(4)} (target <= ${lattice.qualityTarget.maxNdcgLoss})`,
    });
    checks.push({
      name: `${s.state} no-result rate within target`,
      ok: s.noResultShare <= lattice.qualityTarget.maxNoResultShare,
      detail: `${(s.noResultShare * 100).toFixed(2)}% (target <= ${(lattice.qualityTarget.maxNoResultShare * 100).toFixed(2)}%)`,
    });
  }
  return { lattice: lattice.name, states: ordered, checks, ok: checks.every((c) => c.ok) };
}
