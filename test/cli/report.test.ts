import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalStore } from '../../store/index.js';
import type { ExperimentReport } from '../../harness/index.js';
import { simpleCorpus } from '../support/corpus.js';
import { runCli } from '../support/cli.js';
import { jsonService } from '../support/json-service.js';
import { tempProject } from '../support/project.js';

const service = (options: { failEvery?: number; note: string }): Promise<string> => jsonService(options);

async function project(): Promise<string> {
  return tempProject(
    [
      'workloads:',
      '  - name: svc',
      '    tier: svc',
      // A loaded CI machine may fall behind the rate; a trial whose load failed is left out, which these tests do not want.
      '    replay: { rate: 100, concurrency: 16, timeout: 5s, minAchievedShare: 0.3 }',
      // Eight trials: sign flips give at least 2/2ⁿ, which Benjamini–Hochberg multiplies by the judged metrics (3 here): 2/2⁸ × 3 < 0.05 (harness/judge/sign-flip.ts).
      '    trials: { count: 8, warmup: 100ms, measure: 1s }',
      '    harness:',
      '      responses: { ignoreFields: [servedAt], maxStatusMismatchShare: 0.05 }',
    ],
    simpleCorpus(2_000),
    'tandem-cli-report-',
  );
}

describe('tandem report', () => {
  it('judges a stored experiment: a treatment failing 10% of requests regresses the critical error share', async () => {
    const dir = await project();
    const control = await service({ note: '<script>alert("control")</script>' });
    const treatment = await service({ failEvery: 10, note: '<img src=x onerror=alert(1)>' });
    const replay = await runCli(['replay', '--workload', 'svc', '--control', control, '--treatment', treatment, '--seed', '3', '--json'], { cwd: dir });
    expect(replay.code, replay.err).toBe(0);
    const { experimentId } = JSON.parse(replay.out) as { experimentId: string };

    const json = await runCli(['report', experimentId, '--format', 'json'], { cwd: dir });
    expect(json.code, json.err).toBe(1);
    const report = JSON.parse(json.out) as ExperimentReport;
    expect(report.schema).toBe('tandem.report/v1');
    expect(report.verdict.outcome).toBe('regressed');
    expect(report.verdict.trials).toBe(8);
    const errorShare = report.metrics.find((m) => m.metric === 'error_share')!;
    expect(errorShare).toMatchObject({ verdict: 'regression', judged: true });
    expect(errorShare.estimate).toBeCloseTo(0.1, 1);
    expect(report.verdict.reasons.join('\n')).toMatch(/critical metric error_share regressed/);
    expect(report.verdict.reasons.join('\n')).toMatch(/final check status-mismatch<=0\.05 failed/);
    expect(report.comparison!.statusMismatchShare).toBeCloseTo(0.1, 1);
    expect(report.comparison!.fields.find((f) => f.path === 'servedAt')).toMatchObject({ ignored: 'config' });
    expect(report.comparison!.fields.find((f) => f.path === 'note')).toMatchObject({ ignored: false });
    expect(report.perTrial.filter((t) => t.metric === 'error_share')).toHaveLength(8);
    expect(report.arms.control.requests).toBe(report.arms.treatment.requests);
    expect(report.latencyCdf.control.length).toBe(101);
    // The verdict is stored on the experiment.
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    expect((await store.experiments.get(experimentId))!.verdict).toMatchObject({ outcome: 'regressed' });

    const md = await runCli(['report', experimentId, '--format', 'md'], { cwd: dir });
    expect(md.code).toBe(1);
    expect(md.out).toMatch(/^### ❌ Tandem: regressed — svc/);
    expect(md.out).toMatch(/\| error\\_share \(critical\) \|/);
    expect(md.out).not.toMatch(/<script|<img/);
    expect(md.out).toContain('&lt;script&gt;');

    const html = await runCli(['report', experimentId, '--format', 'html', '--out', 'report.html'], { cwd: dir });
    expect(html.code).toBe(1);
    const page = await readFile(join(dir, 'report.html'), 'utf8');
    expect(page).toMatch(/^<!doctype html>/);
    // Self-contained: no script, no external asset; hostile recorded bodies are escaped.
    expect(page).not.toMatch(/<script|<img|src=["']?http|href=["']?http/i);
    expect(page).toContain('&lt;script&gt;alert(\\&quot;control\\&quot;)&lt;/script&gt;');
    expect(page).toMatch(/<figure class="chart" role="img" aria-label="latency CDF per arm"><svg [^>]*viewBox=/);
    expect(page).toMatch(/<figure class="chart" role="img" aria-label="per-trial effects of error_share"><svg [^>]*viewBox=/);
  });

  it('calibrates a workload A/A and uses the calibration in later reports', async () => {
    const dir = await project();
    const control = await service({ note: 'same' });
    const calibration = await runCli(['calibrate', '--workload', 'svc', '--control', control, '--trials', '6', '--subsets', '50', '--seed', '4', '--json'], {
      cwd: dir,
    });
    expect(calibration.code, calibration.err).toBe(0);
    const result = JSON.parse(calibration.out) as {
      experimentId: string;
      trials: number;
      design: unknown;
      subsets: number;
      falsePositiveRate: number;
      metrics: Record<string, { sd: number; noiseFloor: number; slotBias: { pValue: number } }>;
    };
    expect(result).toMatchObject({ trials: 6, design: { minTrials: 8, maxTrials: 8 }, subsets: 50 });
    expect(result.metrics.error_share!.sd).toBe(0);
    expect(result.metrics.latency_mean!.noiseFloor).toBeGreaterThan(0);
    // The share of the 50 A/A subsets the judge called regressed: a multiple of 1/50, and low for the same build.
    // The subsets overlap (6 trials), so 0.3 is a loose bound — but one a judge calling A/A differences regressions fails.
    expect(Math.abs(result.falsePositiveRate * 50 - Math.round(result.falsePositiveRate * 50))).toBeLessThan(1e-9);
    expect(result.falsePositiveRate).toBeLessThanOrEqual(0.3);

    const replay = await runCli(['replay', '--workload', 'svc', '--control', control, '--treatment', control, '--seed', '8', '--json'], { cwd: dir });
    const { experimentId } = JSON.parse(replay.out) as { experimentId: string };
    const json = await runCli(['report', experimentId, '--format', 'json'], { cwd: dir });
    const report = JSON.parse(json.out) as ExperimentReport;
    expect(report.calibration).toMatchObject({ experimentId: result.experimentId, trials: 6 });
    expect(report.metrics.find((m) => m.metric === 'latency_mean')!.noiseFloor).toBeGreaterThan(0);
    expect(report.metrics.find((m) => m.metric === 'error_share')!.verdict).toBe('no change');
    const ignored = await runCli(['report', experimentId, '--format', 'json', '--no-calibration'], { cwd: dir });
    expect((JSON.parse(ignored.out) as ExperimentReport).calibration).toBeUndefined();
  });

  it('cancels out fields that differ between two controls (control, control′, treatment)', async () => {
    const dir = await project();
    const control = await service({ note: 'same' });
    const controlPrime = await service({ note: 'same' });
    const treatment = await service({ note: 'changed' });
    const replay = await runCli(
      ['replay', '--workload', 'svc', '--control', control, '--treatment', treatment, '--control-prime', controlPrime, '--trials', '2', '--json'],
      { cwd: dir },
    );
    expect(replay.code, replay.err).toBe(0);
    const { experimentId } = JSON.parse(replay.out) as { experimentId: string };
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    const arms = new Map<string, number>();
    for await (const o of store.outcomes.read(experimentId)) arms.set(o.arm, (arms.get(o.arm) ?? 0) + 1);
    expect(arms.get('control-prime')).toBeGreaterThan(0);
    expect(arms.get('control-prime')).toBeLessThanOrEqual(arms.get('control')!);
    // Without the configured ignore, servedAt differs everywhere: noise, found by control′.
    await writeFile(join(dir, 'tandem.config.yaml'), (await readFile(join(dir, 'tandem.config.yaml'), 'utf8')).replace('ignoreFields: [servedAt], ', ''));
    const report = JSON.parse((await runCli(['report', experimentId, '--format', 'json'], { cwd: dir })).out) as ExperimentReport;
    expect(report.comparison!.noiseCancellation).toBe(true);
    expect(report.comparison!.fields.find((f) => f.path === 'servedAt')).toMatchObject({ ignored: 'noise' });
    expect(report.comparison!.fields.find((f) => f.path === 'note')).toMatchObject({ ignored: false, rate: 1, noiseRate: 0 });
    expect(report.notes.join('\n')).not.toMatch(/no control′ arm/);
  });

  it('runs during-checks from the checks module on the monitor loop: a sustained violation cancels the replay', async () => {
    const dir = await project();
    await writeFile(
      join(dir, 'checks.ts'),
      [
        'export default {',
        "  during: [{ name: 'treatment-5xx', intervalMs: 200, consecutive: 2,",
        "    evaluate: ({ live }: { live: { errorShare(arm: string, c?: string): number } }) => { const share = live.errorShare('treatment', '5xx'); return { ok: !(share > 0.05), value: share }; } }],",
        '};',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(dir, 'tandem.config.yaml'),
      (await readFile(join(dir, 'tandem.config.yaml'), 'utf8'))
        .replace('    harness:\n', '    harness:\n      checksModule: checks.ts\n')
        .replace('measure: 1s', 'measure: 20s'),
    );
    const control = await service({ note: 'same' });
    const treatment = await service({ failEvery: 5, note: 'same' });
    const replay = await runCli(['replay', '--workload', 'svc', '--control', control, '--treatment', treatment, '--json'], { cwd: dir });
    expect(replay.code).toBe(2);
    const summary = JSON.parse(replay.out) as { experimentId: string; status: string; cancellation: { detector: string } };
    expect(summary.status).toBe('cancelled');
    expect(summary.cancellation.detector).toBe('check:treatment-5xx');
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    const observations = await store.observations.read(summary.experimentId);
    expect(observations.filter((o) => o.detector === 'check:treatment-5xx' && o.verdict === 'violation').length).toBeGreaterThanOrEqual(2);
  });

  it('answers bad input with exit 3', async () => {
    const dir = await project();
    const unknown = await runCli(['report', 'no-such-experiment'], { cwd: dir });
    expect(unknown.code).toBe(3);
    expect(unknown.err).toMatch(/no experiment "no-such-experiment" in the store/);
    const format = await runCli(['report', 'x', '--format', 'pdf'], { cwd: dir });
    expect(format.code).toBe(3);
    expect(format.err).toMatch(/pdf/);
    const fuzzUrl = await runCli(['fuzz', '--workload', 'svc', '--url', 'ftp://x'], { cwd: dir });
    expect(fuzzUrl.code).toBe(3);
    expect(fuzzUrl.err).toMatch(/--url must be an http:\/\/ URL/);
  });
});
