/**
 * `npm run bench -- plain-bisect`: `tandem bisect` as a user runs it, on the plain scoring service (examples/scorer)
 * with Tandem's defaults (a workload that names only its arms). A scratch repository of 8 commits whose fifth doubles
 * the scorer's work (issue 68's scenario); each commit's `WORK` file is the arms' `--work`. The bisection must name
 * the fifth commit and exit 0. The same-run baseline is the revision list itself: a linear scan from the good commit
 * would judge every revision up to the first bad one.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createLocalStore } from '../store/index.js';
import { scorerCorpus, startFeatureStore } from '../examples/scorer/index.js';

const run$ = promisify(execFile);
const here = import.meta.dirname;
const COMMITS = 8;
const FIRST_BAD = 5;

async function git(repo: string, ...args: string[]): Promise<string> {
  const { stdout } = await run$('git', ['-C', repo, ...args], {
    env: { ...process.env, GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@127.0.0.1', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@127.0.0.1' },
  });
  return stdout.trim();
}

/** c1..c8; c5 onwards score with twice the work. Returns the commits, oldest first. */
async function scratchRepository(repo: string): Promise<string[]> {
  await git(repo, 'init', '-q', '-b', 'main');
  const commits: string[] = [];
  for (let i = 1; i <= COMMITS; i++) {
    await writeFile(join(repo, 'WORK'), i >= FIRST_BAD ? '2\n' : '1\n');
    await writeFile(join(repo, 'CHANGELOG'), `c${i}\n`, { flag: 'a' });
    await git(repo, 'add', 'WORK', 'CHANGELOG');
    await git(repo, 'commit', '-q', '-m', `c${i}`);
    commits.push(await git(repo, 'rev-parse', 'HEAD'));
  }
  return commits;
}

/** The workload as a new user writes it: arms (the revision's WORK read by the deploy command) and nothing else. */
function configText(dir: string, repo: string, featuresUrl: string): string {
  const command = `'${process.execPath}' '${join(here, '..', 'examples', 'scorer', 'run.mjs')}' --port {port} --work "$(git -C '${repo}' show {revision}:WORK)"`;
  const arm = `{ deploy: { command: ${JSON.stringify(command)}, env: { FEATURES_URL: ${JSON.stringify(featuresUrl)} } } }`;
  return [
    `store: { kind: local, dir: ${JSON.stringify(join(dir, '.tandem'))} }`,
    'workloads:',
    '  - name: scorer',
    '    tier: scorer',
    '    arms:',
    `      control: ${arm}`,
    `      treatment: ${arm}`,
    '',
  ].join('\n');
}

interface BisectJson {
  readonly firstBad?: string;
  readonly candidates: readonly string[];
  readonly steps: readonly { revision: string; verdict: string; reason: string; experimentId?: string }[];
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-plain-bisect-'));
  const repo = join(dir, 'repo');
  const features = await startFeatureStore();
  try {
    await mkdir(repo);
    const commits = await scratchRepository(repo);
    const configPath = join(dir, 'tandem.config.yaml');
    await writeFile(configPath, configText(dir, repo, features.url));
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    await store.init();
    await store.corpus.append(scorerCorpus(4_000));
    await store.close();

    const started = performance.now();
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
      const args = [
        join(here, '..', 'bin', 'tandem.js'),
        'bisect',
        '--config',
        configPath,
        '--workload',
        'scorer',
        '--good',
        commits[0]!,
        '--bad',
        commits[COMMITS - 1]!,
        '--repo',
        repo,
        '--json',
      ];
      const child = spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.once('error', reject);
      child.once('close', (exitCode) => resolve({ code: exitCode, out: text }));
    });
    const seconds = (performance.now() - started) / 1000;
    const result = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as BisectJson;
    const experiments = new Set(result.steps.map((s) => s.experimentId).filter((id) => id !== undefined)).size;
    for (const step of result.steps) process.stderr.write(`  c${commits.indexOf(step.revision) + 1}: ${step.verdict} (${step.reason})\n`);
    const figures = {
      baseline: 'a linear scan of the same revisions from the good commit (the experiments it would run to reach the first bad one)',
      commits: COMMITS,
      firstBadCommit: `c${FIRST_BAD}`,
      named:
        result.firstBad !== undefined
          ? `c${commits.indexOf(result.firstBad) + 1}`
          : `one of ${result.candidates.map((c) => `c${commits.indexOf(c) + 1}`).join(', ')}`,
      plainBisectNamedFirstBad: result.firstBad === commits[FIRST_BAD - 1] ? 1 : 0,
      plainBisectExit: code,
      plainBisectExperiments: experiments,
      linearScanExperiments: FIRST_BAD - 1,
      plainBisectSeconds: Number(seconds.toFixed(1)),
    };
    const targets = {
      plainBisectNamedFirstBad: { value: figures.plainBisectNamedFirstBad, min: 1 },
      plainBisectExit: { value: code ?? 128, max: 0 },
      plainBisectExperiments: { value: experiments, max: figures.linearScanExperiments },
      plainBisectSeconds: { value: figures.plainBisectSeconds, max: 600 },
    };
    process.stdout.write(`${JSON.stringify({ bench: 'plain-bisect', figures, targets })}\n`);
  } finally {
    await features.close();
    await rm(dir, { recursive: true, force: true });
  }
}
