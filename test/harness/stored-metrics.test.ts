/**
 * Issue 33: every look read every outcome of every trial so far, and a report held the whole experiment in
 * memory. A look now judges per-trial metrics stored when each trial completed and reads no outcome; a
 * report takes its latency distributions from the store's aggregates and streams responses trial by trial.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RequestOutcome } from '../../core/index.js';
import { createLocalStore, type OutcomeStore, type Store } from '../../store/index.js';
import {
  evaluateExperiment,
  judge,
  lookAtExperiment,
  loadExperimentData,
  metricPolicies,
  TRIAL_METRICS_EVENT,
  trialDataOf,
  trialMetrics,
} from '../../harness/index.js';
import { workloads } from '../support/dashboard-fixtures.js';
import { writeStoredExperiment } from '../support/stored-experiment.js';
import { tempDir } from '../support/temp-dir.js';

interface OutcomeReads {
  /** The trial of each outcome read; `all` for a read of the whole experiment. */
  readonly reads: (number | 'all')[];
  aggregates: number;
}

/** The local store with its outcome reads counted (a real store underneath). */
async function countingStore(): Promise<{ store: Store; reads: OutcomeReads }> {
  const store = createLocalStore({ dir: join(await tempDir('tandem-scale-'), '.tandem') });
  await store.init();
  const reads: OutcomeReads = { reads: [], aggregates: 0 };
  const outcomes: OutcomeStore = {
    append: (o) => store.outcomes.append(o),
    read: (id, options) => {
      reads.reads.push(options?.trial ?? 'all');
      return store.outcomes.read(id, options);
    },
    aggregate: (id, options) => {
      reads.aggregates++;
      return store.outcomes.aggregate(id, options);
    },
  };
  return { store: { ...store, kind: store.kind, location: store.location, init: () => store.init(), close: () => store.close(), outcomes }, reads };
}

const workload = workloads()[0]!;

/** What a look found before this change: every trial's metrics recomputed from its outcomes. */
async function judgedFromOutcomes(store: Store, id: string) {
  const data = await loadExperimentData(store, id, { resamples: 0 });
  const metrics = [];
  for (const trial of data.used) metrics.push(...trialMetrics(await trialDataOf(store, id, trial), { seed: data.record.seed, resamples: 0 }));
  return judge(metrics, {
    policies: metricPolicies(workload.checks),
    alpha: workload.harness.alpha,
    minPoints: workload.harness.minPoints,
    slotSigns: data.slotSigns,
    design: { minTrials: 4, maxTrials: 6 },
  });
}

describe('a sequential look', () => {
  it('judges the per-trial metrics stored when each trial completed, reading no outcome, with the verdict the outcomes give', async () => {
    const { store, reads } = await countingStore();
    await writeStoredExperiment(store, { id: 'exp-look', trials: 6, pairsPerTrial: 300, shift: 0.25 });
    reads.reads.length = 0;
    const verdict = await lookAtExperiment(store, 'exp-look', { workload });
    expect(reads).toEqual({ reads: [], aggregates: 0 });
    const expected = await judgedFromOutcomes(store, 'exp-look');
    expect(verdict.outcome).toBe(expected.outcome);
    expect(verdict.outcome).toBe('regressed');
    const shift = (v: typeof verdict) => v.metrics.find((m) => m.metric === 'latency_shift')!;
    expect(shift(verdict).estimate).toBeCloseTo(shift(expected).estimate, 12);
    expect(shift(verdict).estimate).toBeGreaterThan(0.2);
  });

  it('computes a trial whose metrics were never stored (a worker killed in between) from that trial alone', async () => {
    const { store, reads } = await countingStore();
    await writeStoredExperiment(store, { id: 'exp-killed', trials: 5, pairsPerTrial: 200, shift: 0.25, measured: false });
    // One trial's event is there, another's is unreadable (stored data is input): it is recomputed, not trusted.
    const [first] = await loadExperimentData(store, 'exp-killed').then((d) => d.used);
    const metrics = trialMetrics(await trialDataOf(store, 'exp-killed', first!), { seed: 1, resamples: 0 });
    await store.experiments.appendEvent({
      experimentId: 'exp-killed',
      timeMs: 1,
      type: TRIAL_METRICS_EVENT,
      data: {
        trial: 0,
        attempt: 1,
        version: 1,
        metrics: metrics.map((m) => ({
          ...m,
          effect: Number.isFinite(m.effect) ? m.effect : null,
          low: null,
          high: null,
          control: Number.isFinite(m.control) ? m.control : null,
          treatment: Number.isFinite(m.treatment) ? m.treatment : null,
        })),
      },
    });
    await store.experiments.appendEvent({
      experimentId: 'exp-killed',
      timeMs: 2,
      type: TRIAL_METRICS_EVENT,
      data: { trial: 1, attempt: 1, version: 1, metrics: [{ metric: 'latency_shift', trial: 1, effect: 'fast' }] },
    });
    reads.reads.length = 0;
    const data = await loadExperimentData(store, 'exp-killed', { resamples: 0 });
    expect(data.recomputed).toEqual([1, 2, 3, 4]);
    expect(reads.reads).toEqual([1, 2, 3, 4]);
    const verdict = await lookAtExperiment(store, 'exp-killed', { workload });
    expect(verdict.outcome).toBe((await judgedFromOutcomes(store, 'exp-killed')).outcome);
  });
});

describe('a report', () => {
  it('takes each arm’s counts, errors and latency quantiles from the store’s aggregates, within 1% of the exact ones, leaving out replaced attempts', async () => {
    const { store, reads } = await countingStore();
    await writeStoredExperiment(store, { id: 'exp-report', trials: 4, pairsPerTrial: 2_000, shift: 0.1, replacedAttempt: true });
    reads.reads.length = 0;
    const report = await evaluateExperiment(store, 'exp-report', { workload: { ...workload, harness: { ...workload.harness, responses: undefined } } });
    // No response comparison configured: no outcome is read, only aggregated.
    expect(reads.reads).toEqual([]);
    expect(reads.aggregates).toBe(1);
    const judged: RequestOutcome[] = [];
    for await (const o of store.outcomes.read('exp-report')) if (o.attempt === (o.trial === 0 ? 2 : 1)) judged.push(o);
    for (const arm of ['control', 'treatment'] as const) {
      const mine = judged.filter((o) => o.arm === arm);
      const sorted = mine.map((o) => o.latencyMs).sort((a, b) => a - b);
      const summary = report.arms[arm];
      expect(summary.requests).toBe(mine.length);
      expect(summary.errorsByClass).toEqual({ '5xx': mine.filter((o) => o.errorClass === '5xx').length });
      expect(summary.latencyMs.max).toBe(sorted[sorted.length - 1]);
      expect(summary.latencyMs.mean).toBeCloseTo(sorted.reduce((a, b) => a + b, 0) / sorted.length, 9);
      for (const [q, value] of [
        [0.5, summary.latencyMs.p50],
        [0.9, summary.latencyMs.p90],
        [0.99, summary.latencyMs.p99],
      ] as const) {
        const exact = sorted[Math.round(q * (sorted.length - 1))]!;
        expect(Math.abs(value / exact - 1)).toBeLessThanOrEqual(0.01);
      }
      expect(report.latencyCdf[arm]).toHaveLength(101);
      expect(report.latencyCdf[arm][100]![0]).toBe(sorted[sorted.length - 1]);
    }
  });
});
