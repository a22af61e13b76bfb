import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLocalStore } from '../../store/index.js';
import { bisectRevisions, type StepOutcome } from '../../triggers/index.js';
import { simpleCorpus } from '../support/corpus.js';
import { runCli } from '../support/cli.js';

describe('bisection search', () => {
  const revisions = Array.from({ length: 20 }, (_, i) => `r${i}`);
  const judge =
    (firstBad: number, unbuildable: Set<number>) =>
    async (revision: string): Promise<StepOutcome> => {
      const i = Number(revision.slice(1));
      if (unbuildable.has(i)) return { verdict: 'skip', reason: 'does not build' };
      return { verdict: i >= firstBad ? 'bad' : 'good', reason: '' };
    };

  it('finds the first bad revision for every position, in about log2(n) steps', async () => {
    for (let firstBad = 0; firstBad < 20; firstBad++) {
      const result = await bisectRevisions(revisions, judge(firstBad, new Set()));
      expect(result.firstBad, `first bad r${firstBad}`).toBe(`r${firstBad}`);
      expect(result.steps.length).toBeLessThanOrEqual(5);
    }
  });

  it('steps around unbuildable revisions, and reports every candidate when skips hide the answer', async () => {
    const around = await bisectRevisions(revisions, judge(13, new Set([9, 10])));
    expect(around.firstBad).toBe('r13');
    expect(around.steps.some((s) => s.verdict === 'skip')).toBe(true);
    const hidden = await bisectRevisions(revisions, judge(13, new Set([12, 13])));
    expect(hidden.firstBad).toBeUndefined();
    // r11 good and r14 bad are known; r12 and r13 could not be built, so any of the three may be the first bad one.
    expect(hidden.candidates).toEqual(['r12', 'r13', 'r14']);
  });
});

/** A service whose /item/N fails for every fifth item once the bug is in; `broken` does not even parse. */
function serviceSource(kind: 'ok' | 'buggy' | 'broken', version: number): string {
  if (kind === 'broken')
    return `import { createServer } from 'node:http';\nconst version = ${version};\ncreateServer((req, res) => { res.end( }).listen(Number(process.env.PORT), '127.0.0.1');\n`;
  return [
    "import { createServer } from 'node:http';",
    `const version = ${version};`,
    `const failEvery = ${kind === 'buggy' ? 5 : 0};`,
    'createServer((req, res) => {',
    "  const item = Number(/\\/item\\/(\\d+)/.exec(req.url ?? '')?.[1] ?? -1);",
    "  if (failEvery > 0 && item % failEvery === 0) { res.statusCode = 500; return res.end('boom'); }",
    '  res.end(JSON.stringify({ item, version }));',
    "}).listen(Number(process.env.PORT), '127.0.0.1');",
    '',
  ].join('\n');
}

describe('tandem bisect', () => {
  it('finds a bad commit injected among 20, skipping an unbuildable one, with each step an experiment', { timeout: 180_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tandem-bisect-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env }).trim();
    const fixture = join(import.meta.dirname, 'fixtures', 'run-revision.mjs');
    await writeFile(join(dir, '.gitignore'), '.tandem/\n');
    await writeFile(
      join(dir, 'tandem.config.yaml'),
      [
        'workloads:',
        '  - name: svc',
        '    tier: svc',
        '    arms:',
        `      control: { deploy: { command: "${process.execPath} ${fixture} ${dir} {revision} {port}", readyPath: /item/1, readyTimeout: 10s } }`,
        `      treatment: { deploy: { command: "${process.execPath} ${fixture} ${dir} {revision} {port}", readyPath: /item/1, readyTimeout: 10s } }`,
        '    replay: { rate: 100, concurrency: 16, timeout: 5s, minAchievedShare: 0.2 }',
        // One process per arm: the fixture is not what is measured (its errors decide, below).
        '    trials: { count: 3, warmup: 50ms, measure: 300ms, maxReplacements: 1, processes: 1 }',
        '    checks:',
        // Only errors decide: timing of freshly started processes on a busy machine is not what this test is about.
        '      - { metric: latency_shift, critical: false, threshold: 10 }',
        '      - { metric: latency_p99, critical: false, threshold: 10 }',
        // Three trials are too few to judge a process's CPU or memory (4 degrees of freedom are needed): not required here.
        '      - { metric: cpu_per_request, critical: false, threshold: 10, mustHaveData: false }',
        '      - { metric: rss_bytes, critical: false, threshold: 10, mustHaveData: false }',
        '    harness: { minPoints: 20 }',
        '',
      ].join('\n'),
    );
    git('init', '-q', '-b', 'main');
    await writeFile(join(dir, 'service.mjs'), serviceSource('ok', 0));
    git('add', '-A');
    git('commit', '-q', '-m', 'good');
    const good = git('rev-parse', 'HEAD');
    const commits: string[] = [];
    for (let i = 1; i <= 20; i++) {
      // Commit 6 does not build (fixed in 7); the bug arrives in commit 13 and stays.
      await writeFile(join(dir, 'service.mjs'), serviceSource(i === 6 ? 'broken' : i >= 13 ? 'buggy' : 'ok', i));
      git('commit', '-q', '-am', `change ${i}`);
      commits.push(git('rev-parse', 'HEAD'));
    }
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    await store.corpus.append(simpleCorpus(1_000));
    await store.close();
    const result = await runCli(['bisect', '--workload', 'svc', '--good', good, '--bad', 'HEAD', '--json'], { cwd: dir });
    expect(result.code, result.err).toBe(0);
    const bisection = JSON.parse(result.out) as { firstBad: string; steps: { revision: string; verdict: string; reason: string; experimentId: string }[] };
    expect(bisection.firstBad).toBe(commits[12]);
    expect(bisection.steps.length).toBeLessThanOrEqual(7);
    for (const s of bisection.steps) {
      const n = commits.indexOf(s.revision) + 1;
      expect(s.verdict, `commit ${n}: ${s.reason}`).toBe(n === 6 ? 'skip' : n >= 13 ? 'bad' : 'good');
    }
    // git bisect run's contract at one revision: checked-out buggy commit → 1.
    git('checkout', '-q', commits[15]!);
    const step = await runCli(['bisect-step', '--workload', 'svc', '--good', good], { cwd: dir });
    expect(step.code, step.err).toBe(1);
    const badRef = await runCli(['bisect', '--workload', 'svc', '--good', 'nope'], { cwd: dir });
    expect(badRef.code).toBe(3);
  });
});
