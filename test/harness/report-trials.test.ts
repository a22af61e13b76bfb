import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLocalStore } from '../../store/index.js';
import { evaluateExperiment, renderJson } from '../../harness/index.js';
import { completedTrials, experiment, seedOutcomes, workloads } from '../support/dashboard-fixtures.js';

const T0 = Date.UTC(2026, 11, 6, 10);

describe("the report's trials", () => {
  it('say what each trial\'s arms were sent before it (trials.prewarm), and nothing where the stored record is not counts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tandem-report-trials-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    await store.init();
    const stored = [{ sent: 20, errors: 0 }, { sent: 7, errors: 2 }, { sent: '20', errors: 0 }, { sent: 1.5, errors: 0 }, { sent: 5, errors: -1 }];
    const trials = completedTrials(5, T0).map((t, i) => ({ ...t, details: { ...t.details, prewarm: stored[i] } }));
    await store.experiments.put(experiment({ id: 'exp-warmed', status: 'completed', trials }));
    await seedOutcomes(store, 'exp-warmed', 5, { slowdown: 1 });
    const report = await evaluateExperiment(store, 'exp-warmed', { workload: workloads()[0]! });
    const fromJson = (JSON.parse(renderJson(report)) as { trials: { prewarmSent?: number; prewarmErrors?: number }[] }).trials;
    expect(fromJson.map((t) => [t.prewarmSent, t.prewarmErrors])).toEqual([
      [20, 0],
      [7, 2],
      [undefined, undefined],
      [undefined, undefined],
      [undefined, undefined],
    ]);
  });
});
