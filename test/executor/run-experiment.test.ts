import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, systemClock } from '../../core/index.js';
import { createLocalStore, type Store } from '../../store/index.js';
import { SharedSource } from '../../guardrails/index.js';
import { createQueued, parseRequest, runExperiment } from '../../executor/index.js';
import { simpleCorpus } from '../support/corpus.js';
import { runCli } from '../support/cli.js';
import { freePort } from '../support/free-port.js';
import { jsonService } from '../support/json-service.js';
import { tempProject } from '../support/project.js';

/** A project whose only decisive metric is the error share, so verdicts do not depend on timing (thresholds of 1000%). */
export async function executorProject(extraConfig: string[] = []): Promise<string> {
  return tempProject(
    [
      ...extraConfig,
      'workloads:',
      '  - name: svc',
      '    tier: svc',
      '    replay: { rate: 200, concurrency: 16, timeout: 5s, minAchievedShare: 0.2 }',
      // Eight trials: sign flips give at least 2/2ⁿ, which Benjamini–Hochberg multiplies by the judged metrics (3 here): 2/2⁸ × 3 < 0.05 (harness/judge/sign-flip.ts).
      '    trials: { count: 8, warmup: 50ms, measure: 300ms }',
      '    checks:',
      '      - { metric: latency_shift, critical: false, threshold: 10 }',
      '      - { metric: latency_p99, critical: false, threshold: 10 }',
    ],
    simpleCorpus(2_000),
    'tandem-executor-',
  );
}

describe('tandem run', () => {
  it('takes an experiment through queued → running → passed or regressed, with a report and the exit code', async () => {
    const dir = await executorProject();
    const clean = await jsonService();
    const failing = await jsonService({ failEvery: 5 });
    const passed = await runCli(['run', 'svc', '--control', clean, '--treatment', clean, '--change', 'D1', '--format', 'json'], { cwd: dir });
    expect(passed.code, passed.err).toBe(0);
    const regressed = await runCli(['run', 'svc', '--control', clean, '--treatment', failing, '--change', 'D2', '--format', 'json'], { cwd: dir });
    expect(regressed.code, regressed.err).toBe(1);
    const report = JSON.parse(regressed.out) as { experiment: { id: string; status: string }; verdict: { outcome: string } };
    expect(report.experiment.status).toBe('regressed');
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    const events = await store.experiments.events(report.experiment.id);
    expect(events.filter((e) => e.type === 'status').map((e) => e.message)).toEqual(['queued', 'running', 'regressed']);
    const finished = (await store.experiments.get(report.experiment.id))!;
    expect(finished.verdict).toMatchObject({ outcome: 'regressed' });
    // Each completed trial's metrics were stored once, when it completed: what every look judged (issue 33).
    const measured = events.filter((e) => e.type === 'trial-metrics').map((e) => [e.data!.trial, e.data!.attempt]);
    expect(measured).toEqual(finished.trials.filter((t) => t.status === 'completed').map((t) => [t.index, t.attempt]));
    expect(
      events.filter((e) => e.type === 'trial-metrics').every((e) => (e.data!.metrics as { metric: string }[]).some((m) => m.metric === 'error_share')),
    ).toBe(true);

    // The same change again: the same experiment, already finished, not run twice.
    const again = await runCli(['run', 'svc', '--control', clean, '--treatment', failing, '--change', 'D2', '--format', 'json'], { cwd: dir });
    expect(again.err).toMatch(new RegExp(`already submitted: experiment ${report.experiment.id}`));
    expect((await store.experiments.events(report.experiment.id)).filter((e) => e.type === 'status')).toHaveLength(3);

    const status = await runCli(['status', report.experiment.id], { cwd: dir });
    expect(status.out).toMatch(/regressed/);
    const waited = await runCli(['wait', report.experiment.id], { cwd: dir });
    expect(waited.code).toBe(1);
  });

  it('replays into control′ too when the workload configures it, so run cancels noise fields as replay does', async () => {
    const control = await jsonService();
    const prime = await jsonService();
    const treatment = await jsonService({ note: 'v2' });
    const dir = await tempProject(
      [
        'workloads:',
        '  - name: svc',
        '    tier: svc',
        `    arms: { control: { url: "${control}" }, treatment: { url: "${treatment}" }, controlPrime: { url: "${prime}" } }`,
        '    replay: { rate: 200, concurrency: 16, timeout: 5s, minAchievedShare: 0.2, compareResponses: true }',
        '    trials: { count: 2, warmup: 50ms, measure: 300ms }',
        '    harness: { responses: { noiseRatio: 1.5 } }',
        '    checks:',
        '      - { metric: latency_shift, critical: false, threshold: 10 }',
        '      - { metric: latency_p99, critical: false, threshold: 10 }',
      ],
      simpleCorpus(2_000),
      'tandem-executor-',
    );
    const result = await runCli(['run', 'svc', '--change', 'P1', '--format', 'json'], { cwd: dir });
    const report = JSON.parse(result.out) as {
      comparison: { noiseCancellation: boolean; fields: { path: string; ignored: string | false }[] };
      notes: string[];
    };
    expect(report.comparison.noiseCancellation).toBe(true);
    const byPath = new Map(report.comparison.fields.map((f) => [f.path, f.ignored]));
    expect(byPath.get('servedAt')).toBe('noise');
    expect(byPath.get('note')).toBe(false);
    expect(report.notes.join(' ')).not.toMatch(/control′/);
  });

  it('exits 2 for a run that failed before any verdict, in run, report and wait alike, and still prints its report', async () => {
    const dir = await executorProject();
    const clean = await jsonService();
    const nothing = `http://127.0.0.1:${await freePort()}`;
    const failed = await runCli(['run', 'svc', '--control', clean, '--treatment', nothing, '--change', 'F1', '--format', 'json'], { cwd: dir });
    expect(failed.code, failed.err).toBe(2);
    const report = JSON.parse(failed.out) as { experiment: { id: string; status: string } };
    expect(report.experiment.status).toBe('failed');
    expect(failed.err).toMatch(new RegExp(`experiment ${report.experiment.id} failed: `));
    const again = await runCli(['report', report.experiment.id, '--format', 'json'], { cwd: dir });
    expect(again.code).toBe(2);
    const waited = await runCli(['wait', report.experiment.id], { cwd: dir });
    expect(waited.code).toBe(2);
  });

  it('marks the experiment failed with the reason when a store write fails, keeping what was written', async () => {
    const dir = await executorProject();
    const clean = await jsonService();
    const { config } = await loadConfig({ cwd: dir });
    const local = createLocalStore({ dir: join(dir, '.tandem') });
    const outcomes = { append: async () => Promise.reject(new Error('disk full (ENOSPC)')), read: local.outcomes.read.bind(local.outcomes) };
    // Every store call works except appending outcomes, as when a disk fills mid-run.
    const broken = new Proxy(local, {
      get: (target, property) => {
        if (property === 'outcomes') return outcomes;
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    }) as Store;
    const { record } = await createQueued(local, 'exp-store-fails', parseRequest({ workload: 'svc', control: clean, treatment: clean }), systemClock);
    await expect(
      runExperiment(record.id, { config, store: broken, clock: systemClock, sharedSource: new SharedSource(systemClock), cwd: dir }),
    ).rejects.toThrow(/ENOSPC/);
    const after = await local.experiments.get(record.id);
    expect(after).toMatchObject({ status: 'failed', reason: expect.stringMatching(/disk full/) });
    expect((await local.experiments.events(record.id)).filter((e) => e.type === 'status').map((e) => e.message)).toEqual(['queued', 'running', 'failed']);
  });

  it('repeats A/A calibrations on a schedule (inline --every), each stored as a calibration the reports use', async () => {
    const dir = await executorProject();
    const clean = await jsonService();
    const result = await runCli(['run', 'svc', '--aa', '--control', clean, '--every', '50ms', '--times', '2', '--trials', '4', '--json'], { cwd: dir });
    expect(result.code, result.err).toBe(0);
    const lines = result.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; status: string; verdict: { calibration?: { trials: number } } });
    expect(lines).toHaveLength(2);
    expect(lines.map((l) => l.status)).toEqual(['completed', 'completed']);
    expect(lines[0]!.id).not.toBe(lines[1]!.id);
    expect(lines[1]!.verdict.calibration).toMatchObject({ trials: 4 });
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    expect((await store.experiments.get(lines[1]!.id))!.spec).toMatchObject({ kind: 'calibration', stage: 'periodic' });
  });

  it('answers bad input with exit 3', async () => {
    const dir = await executorProject();
    const cases: [string[], RegExp][] = [
      [['run', 'nope'], /no workload named "nope"/],
      [['run', 'svc', '--control', 'http://127.0.0.1:1'], /give both --control and --treatment/],
      [['run', 'svc', '--stage', 'later'], /later/],
      [['submit', '--noop'], /name a workload, or give --base/],
      [['worker'], /`tandem worker` serves a BullMQ queue/],
      [['status', 'missing'], /no experiment "missing"/],
      [['wait', 'missing'], /no experiment "missing"/],
      [['cancel', 'missing'], /no experiment "missing"/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args, { cwd: dir });
      expect(result.code, args.join(' ')).toBe(3);
      expect(result.err, args.join(' ')).toMatch(message);
    }
  });
});

describe('inconclusive verdicts', () => {
  it('ends undecided critical metrics inconclusive (exit 5), never passed unless the run asks for it, and then says so', async () => {
    // A latency_shift that must be decided within ±0 can never be: with alpha 1e-6 nor can it be called a regression.
    const dir = await executorProject(['# undecidable on purpose']);
    const config = join(dir, 'tandem.config.yaml');
    const text = (await readFile(config, 'utf8'))
      .replace(
        '      - { metric: latency_shift, critical: false, threshold: 10 }',
        '      - { metric: latency_shift, critical: true, direction: either, threshold: 0 }',
      )
      .replace('    checks:', '    harness: { alpha: 0.000001 }\n    checks:');
    await writeFile(config, text);
    const clean = await jsonService();
    const undecided = await runCli(['run', 'svc', '--control', clean, '--treatment', clean, '--change', 'I1', '--format', 'md'], { cwd: dir });
    expect(undecided.code, undecided.err).toBe(5);
    expect(undecided.out).toMatch(/^### ❔ Tandem: inconclusive/);
    expect(undecided.out).toMatch(
      /\*\*Inconclusive \(not passed: more trials, or a less noisy setup, are needed\)\.\*\* latency\\_shift: a regression (up|down) to [+−]\d+\.\d\d% cannot be excluded/,
    );
    const accepted = await runCli(['run', 'svc', '--control', clean, '--treatment', clean, '--change', 'I2', '--on-inconclusive', 'pass', '--format', 'md'], {
      cwd: dir,
    });
    expect(accepted.code, accepted.err).toBe(0);
    expect(accepted.out).toMatch(/PASSED ONLY BECAUSE THE WORKLOAD ACCEPTS INCONCLUSIVE RESULTS/);
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    const records = await store.experiments.list({ workload: 'svc' });
    expect(records.map((r) => r.status).sort()).toEqual(['inconclusive', 'passed']);
    const waited = await runCli(['wait', records.find((r) => r.status === 'inconclusive')!.id], { cwd: dir });
    expect(waited.code).toBe(5);
  });
});
