/**
 * Issue 32: after Ctrl-C, `run` printed "### ❌ Tandem: regressed" for a cancelled experiment — a verdict
 * built from its partial data plus a final check over one trial. A stopped experiment says it stopped, why,
 * and what was measured, never a verdict.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLocalStore } from '../../store/index.js';
import { evaluateExperiment, renderHtml, renderMarkdown } from '../../harness/index.js';
import { completedTrials, experiment, seedOutcomes, workloads } from '../support/dashboard-fixtures.js';
import { interruptionReason } from '../../cli/commands/run.js';

const T0 = Date.UTC(2026, 10, 30, 10);

async function storeWith(status: 'cancelled' | 'failed' | 'completed', reason?: string, storedOutcome?: string) {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-stopped-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const store = createLocalStore({ dir: join(dir, '.tandem') });
  await store.init();
  // Treatment twice as slow, and a response difference a final check fails on: judged, this is `regressed`.
  await store.experiments.put(
    experiment({
      id: 'exp-stop',
      status,
      ...(reason ? { reason } : {}),
      trials: completedTrials(4, T0),
      spec: { kind: 'experiment', stage: 'diff', design: { minTrials: 2, maxTrials: 6 } },
      ...(storedOutcome ? { verdict: { outcome: storedOutcome } } : {}),
    }),
  );
  await seedOutcomes(store, 'exp-stop', 4, { slowdown: 2 });
  return store;
}

describe('the report of an experiment that stopped before its verdict', () => {
  it('says cancelled and why, judges nothing, runs no final check, and still shows what was measured', async () => {
    const store = await storeWith('cancelled', 'cancelled by the user (SIGINT)');
    const workload = workloads()[0]!;
    const report = await evaluateExperiment(store, 'exp-stop', {
      workload,
      checks: { final: [{ name: 'always-fails', evaluate: () => ({ ok: false, message: 'over one trial' }) }] },
    });
    expect(report.stopped).toEqual({ status: 'cancelled', reason: 'cancelled by the user (SIGINT)', trialsMeasured: report.verdict.trials });
    expect(report.verdict.outcome).toBe('no data');
    expect(report.verdict.decided).toBe(false);
    expect(report.finalChecks).toEqual([]);
    expect(report.metrics.filter((m) => m.judged).every((m) => m.verdict === 'no data' && m.reason.startsWith('not judged'))).toBe(true);
    // What was measured is still there: the latency estimate of a 2x slower treatment.
    expect(report.metrics.find((m) => m.metric === 'latency_shift')!.estimate).toBeGreaterThan(0.5);
    const markdown = renderMarkdown(report);
    expect(markdown).toMatch(/^### ⏹️ Tandem: cancelled — ranking \(exp-stop\)/);
    expect(markdown).toContain('Cancelled: cancelled by the user (SIGINT). No verdict');
    expect(markdown).not.toMatch(/regressed|final check/i);
    const html = renderHtml(report);
    expect(html).toContain('<span class="bad">cancelled</span>');
    expect(html).toContain('<title>Tandem cancelled:');
    expect(html).not.toContain('>regressed<');
  });

  it('treats a failure before a verdict the same way, and leaves alone one that ended for lack of data or completed', async () => {
    const failed = await evaluateExperiment(await storeWith('failed', 'failed: trial 2 could not deploy'), 'exp-stop', { workload: workloads()[0]! });
    expect(failed.stopped).toMatchObject({ status: 'failed', reason: 'trial 2 could not deploy' });
    expect(renderMarkdown(failed)).toMatch(/^### 💥 Tandem: failed/);
    const noData = await evaluateExperiment(await storeWith('failed', 'no data', 'no data'), 'exp-stop', { workload: workloads()[0]! });
    expect(noData.stopped).toBeUndefined();
    const completed = await evaluateExperiment(await storeWith('completed'), 'exp-stop', { workload: workloads()[0]! });
    expect(completed.stopped).toBeUndefined();
    expect(completed.verdict.outcome).toBe('regressed');
  });

  it('names who stopped a run and how, not "shutting down"', () => {
    expect(interruptionReason(new Error('interrupted by SIGINT'))).toBe('cancelled by the user (SIGINT)');
    expect(interruptionReason(new Error('interrupted by SIGTERM'))).toBe('cancelled: tandem was told to stop (SIGTERM)');
    expect(interruptionReason(undefined)).toBe('cancelled: tandem was told to stop');
  });
});
