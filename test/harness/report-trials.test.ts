import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLocalStore } from '../../store/index.js';
import { evaluateExperiment, renderJson, renderMarkdown } from '../../harness/index.js';
import { completedTrials, experiment, seedOutcomes, workloads } from '../support/dashboard-fixtures.js';

const T0 = Date.UTC(2026, 11, 6, 10);

describe("the report's trials", () => {
  it("say what each trial's arms were sent before it (trials.prewarm), and nothing where the stored record is not counts", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tandem-report-trials-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    await store.init();
    const stored = [
      { sent: 20, errors: 0 },
      { sent: 7, errors: 2 },
      { sent: '20', errors: 0 },
      { sent: 1.5, errors: 0 },
      { sent: 5, errors: -1 },
    ];
    // Stored data is input: counts of the wrong shape are written as a hostile store would hold them.
    const trials = completedTrials(5, T0).map((t, i) => ({ ...t, details: { ...t.details, prewarm: stored[i] as { sent: number; errors: number } } }));
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
    // Each dropped field is named in the notes.
    expect(report.notes.filter((n) => n.includes('details: prewarm'))).toHaveLength(3);
  });

  it('says how many judged metrics Benjamini–Hochberg counted, and which (Tarone: harness/judge/tested-family.ts)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tandem-report-family-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    await store.init();
    await store.experiments.put(experiment({ id: 'exp-family', status: 'completed', trials: completedTrials(8, T0) }));
    await seedOutcomes(store, 'exp-family', 8, { slowdown: 1.1 });
    const report = await evaluateExperiment(store, 'exp-family', { workload: workloads()[0]! });
    const counted = report.metrics.filter((m) => m.counted === true).map((m) => m.metric);
    expect(counted.length).toBeGreaterThan(0);
    expect(report.verdict.familySize).toBeGreaterThanOrEqual(counted.length);
    const json = JSON.parse(renderJson(report)) as { verdict: { familySize?: number }; metrics: { metric: string; counted?: boolean }[] };
    expect(json.verdict.familySize).toBe(report.verdict.familySize);
    expect(json.metrics.filter((m) => m.counted).map((m) => m.metric)).toEqual(counted);
    expect(renderMarkdown(report)).toContain(`could make them significant, counting ${report.verdict.familySize})`);
  });
});
