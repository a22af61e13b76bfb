/**
 * Stores seeded the way experiments leave them, for the dashboard's tests and
 * bench: finished experiments with outcomes, a running one whose progress,
 * looks and detector checks a test writes step by step, hostile names.
 */
import { systemClock, type ExperimentRecord, type RequestOutcome, type WorkloadConfig } from '../../core/index.js';
import { configSchema } from '../../core/index.js';
import type { Store } from '../../store/index.js';
import { startDashboard, type DashboardServer } from '../../dashboard/server.js';
import type { DashboardActions } from '../../dashboard/context.js';
import { evaluateExperiment } from '../../harness/index.js';

export const HOSTILE = `<script>alert('x')</script>"'&`;

export function workloads(): WorkloadConfig[] {
  return configSchema.parse({
    workloads: [
      {
        name: 'ranking',
        tier: 'ranking',
        detectors: [{ name: 'errors', kind: 'experiment-attributed', source: 'http://127.0.0.1:9/errors', rule: { above: 0 }, warmup: '10s', consecutive: 3 }],
      },
      { name: 'query', tier: 'query' },
    ],
  }).workloads;
}

export function experiment(overrides: Partial<ExperimentRecord> & { id: string }): ExperimentRecord {
  return {
    workload: 'ranking',
    status: 'queued',
    createdAtMs: Date.UTC(2026, 10, 30, 10),
    updatedAtMs: Date.UTC(2026, 10, 30, 10),
    seed: 1,
    spec: { kind: 'experiment', stage: 'diff', design: { minTrials: 2, maxTrials: 6 } },
    trials: [],
    ...overrides,
  };
}

/** Outcomes of `trials` completed trials, treatment `slowdown` times slower; bodies differ in one field when `differ`. */
export async function seedOutcomes(
  store: Store,
  id: string,
  trials: number,
  options: { slowdown?: number; differ?: boolean; pairs?: number } = {},
): Promise<void> {
  const outcomes: RequestOutcome[] = [];
  const t0 = Date.UTC(2026, 10, 30, 10);
  for (let trial = 0; trial < trials; trial++) {
    for (let i = 0; i < (options.pairs ?? 60); i++) {
      for (const arm of ['control', 'treatment'] as const) {
        const latency = (10 + ((i * 7919 + trial * 31) % 13)) * (arm === 'treatment' ? (options.slowdown ?? 1) : 1);
        const body = JSON.stringify({ items: [i, i + 1], note: arm === 'treatment' && options.differ ? `${HOSTILE}${i}` : 'same' });
        outcomes.push({
          experimentId: id,
          trial,
          attempt: 1,
          arm,
          recordId: `r${i}`,
          intendedMs: t0 + trial * 10_000 + i * 10,
          latencyMs: latency,
          status: 200,
          bytes: body.length,
          errorClass: '',
          bodyHash: arm,
          first: (i + trial) % 2 === (arm === 'control' ? 0 : 1),
          body: Buffer.from(body).toString('base64'),
          response: {
            method: 'GET',
            path: `/search?q=${i}`,
            contentType: 'application/json',
            decodedBytes: body.length,
            contentHash: arm === 'treatment' && options.differ ? `t${i}` : `c${i}`,
          },
        });
      }
    }
  }
  await store.outcomes.append(outcomes);
}

export const completedTrials = (n: number, t0: number): ExperimentRecord['trials'] =>
  Array.from({ length: n }, (_, index) => ({
    index,
    attempt: 1,
    status: 'completed' as const,
    startedAtMs: t0 + index * 10_000,
    endedAtMs: t0 + index * 10_000 + 9_000,
    details: { achievedRate: 20 },
  }));

/** A dashboard over `store` in this process on a free port, with actions recorded when a token is given. */
export async function dashboardOver(
  store: Store,
  options: { token?: string; actions?: DashboardActions; livePollMs?: number; allowedHosts?: string[]; log?: (line: string) => void } = {},
): Promise<DashboardServer> {
  const configured = workloads();
  return startDashboard(
    {
      store,
      clock: systemClock,
      workloads: configured,
      lattices: [],
      workload: (name) => configured.find((w) => w.name === name),
      report: (record) => evaluateExperiment(store, record.id, { workload: configured.find((w) => w.name === record.workload) ?? configured[0]! }),
      ...(options.actions ? { actions: options.actions } : {}),
      ...(options.log ? { log: options.log } : {}),
    },
    {
      port: 0,
      ...(options.token ? { token: options.token } : {}),
      ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
      livePollMs: options.livePollMs ?? 100,
      listPollMs: 200,
    },
  );
}
