/**
 * The README's five steps ("From the demo to your own service"), as written,
 * against the stateful notes service of examples/notes: record production
 * traffic, write the workload, run an experiment of an upgrade, read the
 * report, and gate CI with `submit --base --head`. The upgrade (v2) wraps a
 * list in an envelope, turns ids into strings and answers 404 beyond the
 * tenth note; the bodies come back gzip-compressed to the recorded clients.
 */
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startNotes } from '../../examples/notes/notes-service.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { tempDir } from '../support/temp-dir.js';

const git = (dir: string, ...args: string[]): string =>
  execFileSync('git', args, {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
  }).trim();

/** Step 2: the workload, deploying each arm per trial from the revision it is given. */
function workloadConfig(dir: string): string {
  const deploy = `'${process.execPath}' '${join(REPO_ROOT, 'examples', 'notes', 'run.mjs')}' --port {port} --revision {revision} --repo '${dir}'`;
  return [
    'workloads:',
    '  - name: notes',
    '    tier: notes',
    '    arms:',
    `      control: { deploy: { command: "${deploy}", readyTimeout: 60s } }`,
    `      treatment: { deploy: { command: "${deploy}", readyTimeout: 60s } }`,
    '    replay: { rate: 60, concurrency: 32, timeout: 5s, minAchievedShare: 0.2, compareResponses: true }',
    '    trials: { count: 2, warmup: 200ms, measure: 1500ms }',
    '    harness: { responses: { maxStatusMismatchShare: 0.01 } }',
    '    checks:',
    // Two short trials cannot decide latency or CPU; the status check decides this upgrade.
    '      - { metric: latency_shift, critical: false, threshold: 10 }',
    '      - { metric: latency_p99, critical: false, threshold: 10 }',
    '      - { metric: cpu_per_request, critical: false, threshold: 10 }',
    '      - { metric: rss_bytes, critical: false, threshold: 10 }',
    '',
  ].join('\n');
}

describe('the README tutorial, end to end, on examples/notes', () => {
  it('records, validates, runs, reports and gates CI as the README says, and finds what the upgrade changed', async () => {
    const dir = await tempDir();
    git(dir, 'init', '-q');
    await writeFile(join(dir, 'tandem.config.yaml'), workloadConfig(dir));
    await writeFile(join(dir, 'notes-version'), 'v1\n');
    git(dir, 'add', '.');
    git(dir, 'commit', '-q', '-m', 'notes v1');
    const base = git(dir, 'rev-parse', 'HEAD');
    await writeFile(join(dir, 'notes-version'), 'v2\n');
    git(dir, 'commit', '-q', '-am', 'notes v2');
    const head = git(dir, 'rev-parse', 'HEAD');

    // 1. Record: the sidecar in front of production (v1), clients that accept gzip, reads and writes.
    const production = await startNotes('v1');
    onTestFinished(() => new Promise<void>((resolve) => production.server.close(() => resolve())));
    const stop = new AbortController();
    const recorded = await runCli(['record', '--tier', 'notes', '--listen', '127.0.0.1:0', '--upstream', production.url, '--rate', '1', '--json'], {
      cwd: dir,
      signal: stop.signal,
      onOut: async (text) => {
        const { url } = JSON.parse(text) as { url: string };
        for (let i = 0; i < 240; i++) {
          const headers = { 'accept-encoding': 'gzip', 'content-type': 'application/json' };
          const path = i % 4 === 0 ? '/notes?limit=5' : `/notes/${(i % 20) + 1}`;
          const res =
            i % 10 === 9
              ? await fetch(`${url}/notes`, { method: 'POST', headers, body: JSON.stringify({ title: `t${i}` }) })
              : await fetch(`${url}${path}`, { headers });
          await res.arrayBuffer();
        }
        stop.abort();
      },
    });
    expect(recorded.code, recorded.err).toBe(0);
    const ls = await runCli(['corpus', 'ls', '--json'], { cwd: dir });
    expect(JSON.parse(ls.out).tiers).toEqual([expect.objectContaining({ tier: 'notes', count: 240 })]);

    // 2. The workload is valid.
    const valid = await runCli(['validate'], { cwd: dir });
    expect(valid.code, valid.err).toBe(0);

    // 3. Run an experiment of the upgrade: regressed (404s), and the report says what changed, by endpoint.
    const run = await runCli(['run', 'notes', '--control-revision', base, '--treatment-revision', head, '--format', 'json'], { cwd: dir });
    expect(run.code, run.err).toBe(1);
    const report = JSON.parse(run.out) as {
      experiment: { id: string; spec: { compared?: unknown } };
      comparison: {
        pairs: number;
        comparedBodies: number;
        skipped: Record<string, number>;
        endpoints: { endpoint: string; differing: number; statusMismatches: number; fields: { path: string; counted: boolean }[] }[];
      };
    };
    expect(report.experiment.spec.compared).toEqual({ control: { revision: base }, treatment: { revision: head } });
    // Every pair's body compared, gzip or not.
    expect(report.comparison.comparedBodies).toBe(report.comparison.pairs);
    expect(report.comparison.skipped).toEqual({});
    const endpoints = new Map(report.comparison.endpoints.map((e) => [e.endpoint, e]));
    expect(
      endpoints
        .get('GET /notes?limit')!
        .fields.filter((f) => f.counted)
        .map((f) => f.path),
    ).toEqual(expect.arrayContaining(['data[].id', 'total']));
    expect(endpoints.get('GET /notes/:id')!.statusMismatches).toBeGreaterThan(0);
    expect(endpoints.get('GET /notes/:id')!.fields.map((f) => f.path)).toContain('id');

    // 4. Read the report: HTML with the compared revisions in its title and the endpoints side by side.
    const html = await runCli(['report', report.experiment.id, '--format', 'html', '--out', 'report.html'], { cwd: dir });
    expect(html.code).toBe(1);
    const page = await readFile(join(dir, 'report.html'), 'utf8');
    expect(page).toContain(`control ${base.slice(0, 12)} vs treatment ${head.slice(0, 12)}`);
    expect(page).toContain('<code>GET /notes/:id</code>');

    // 5. Gate CI: the change is selected, both ends deployed, the Markdown summary says why, exit 1.
    const ci = await runCli(['submit', '--base', base, '--head', head, '--stage', 'diff', '--wait'], { cwd: dir });
    expect(ci.code, ci.err).toBe(1);
    expect(ci.out).toMatch(/^### Tandem experiments/);
    expect(ci.out).toMatch(/\| notes \| exp-[0-9a-f]+ \| [^|]+ \| regressed/);
    // Issue 32: the CI summary carries the metric table, the top endpoint differences with the shape change in
    // words, and where the full HTML report is.
    expect(ci.out).toContain('### Per experiment');
    expect(ci.out).toMatch(/\| Metric \| Effect \| 95% CI \| Verdict \|/);
    expect(ci.out).toMatch(/\| GET \/notes\?limit \| [\d.]+% \| array → object \{data, total\}/);
    const htmlPath = /Full report: `(tandem-reports\/exp-[0-9a-f]+\.html)`/.exec(ci.out)?.[1];
    expect(htmlPath).toBeDefined();
    expect(await readFile(join(dir, htmlPath!), 'utf8')).toMatch(/^<!doctype html>/);
  }, 240_000);
});
