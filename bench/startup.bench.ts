/**
 * `npm run bench -- startup`: how long the CLI and a deployed example service
 * take to start, against `node -e 0` (the floor: a Node process that loads
 * nothing) measured in the same run, and beside the same commands run from
 * the TypeScript sources through tsx (what every start cost before the
 * compiled build; TANDEM_FROM_SOURCE=1).
 *
 *   helpSeconds         `tandem --help`, median of 10
 *   affectedSeconds70   `tandem affected --json` on a generated 70-package npm workspace (one workload per
 *                       package, a 3-file change), median of 5
 *   serviceStartSeconds the ranking service started by its deploy command as a trial arm starts it
 *                       (`tandem example-stack --service ranking --port P`) until /healthz answers 200, median of 5
 *
 * The compiled build is made before timing (the first start after an edit builds it; that is not start-up).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { request } from 'undici';
import { median } from './support/median.js';

const BIN = join(import.meta.dirname, '..', 'bin', 'tandem.js');
const PACKAGES = 70;

async function timed(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<number> {
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${args.join(' ')} exited ${code}: ${err.slice(-500)}`))));
  });
  return (performance.now() - started) / 1000;
}

async function repeat(times: number, run: () => Promise<number>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) samples.push(await run());
  return median(samples);
}

/** A 70-package npm workspace: package i depends on i-1 and i-7 (a long chain with shortcuts), one workload each. */
async function workspace(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-startup-'));
  const files: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'root', private: true, workspaces: ['packages/*'] }),
    'package-lock.json': '{}',
    'tandem.config.yaml': [
      'triggers: { graph: { kind: workspaces }, globalInputs: [package-lock.json] }',
      'workloads:',
      ...Array.from({ length: PACKAGES }, (_, i) => `  - { name: w${i}, tier: t${i}, triggers: { targets: ["@bench/p${i}"] } }`),
      '',
    ].join('\n'),
  };
  for (let i = 0; i < PACKAGES; i++) {
    const deps = [i - 1, i - 7].filter((d) => d >= 0).map((d) => [`@bench/p${d}`, '*']);
    files[`packages/p${i}/package.json`] = JSON.stringify({ name: `@bench/p${i}`, dependencies: Object.fromEntries(deps) });
    files[`packages/p${i}/src/index.js`] = `export const p${i} = ${i};\n`;
  }
  for (const [file, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await writeFile(join(dir, file), text);
  }
  const env = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
  const git = (...args: string[]): void => void execFileSync('git', args, { cwd: dir, env, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  // The change: three source files in three packages.
  for (const i of [12, 40, 61]) await writeFile(join(dir, `packages/p${i}/src/index.js`), `export const p${i} = ${i + 1};\n`);
  git('commit', '-q', '-am', 'change');
  return dir;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Start the ranking service as a trial arm's deploy command does and time it to its first 200 on /healthz. */
async function serviceStart(env: NodeJS.ProcessEnv): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, 'example-stack', '--service', 'ranking', '--port', String(port), '--faults='], {
    env: { ...env, FEATURES_URL: 'http://127.0.0.1:9', INFERENCE_URL: 'http://127.0.0.1:9' },
    stdio: 'ignore',
  });
  try {
    // Bounded: 30 s of probes at most, as the arm's readyTimeout would.
    for (let probe = 0; probe < 6_000; probe++) {
      if (child.exitCode !== null) throw new Error(`the ranking service exited ${child.exitCode}`);
      const ok = await request(`http://127.0.0.1:${port}/healthz`).then(
        async (res) => (await res.body.dump(), res.statusCode === 200),
        () => false,
      );
      if (ok) return (performance.now() - started) / 1000;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error('the ranking service was not ready within 30 s');
  } finally {
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }
}

export async function run(): Promise<void> {
  const compiledEnv = { ...process.env, TANDEM_FROM_SOURCE: '0' };
  const sourceEnv = { ...process.env, TANDEM_FROM_SOURCE: '1' };
  await timed([BIN, '--help'], { env: compiledEnv }); // makes the build if these sources have none yet
  const dir = await workspace();
  try {
    const nodeFloorSeconds = await repeat(10, () => timed(['-e', '0']));
    const helpSeconds = await repeat(10, () => timed([BIN, '--help'], { env: compiledEnv }));
    const helpFromSourceSeconds = await repeat(5, () => timed([BIN, '--help'], { env: sourceEnv }));
    const affectedArgs = [BIN, 'affected', '--base', 'HEAD~1', '--head', 'HEAD', '--json'];
    const affectedSeconds70 = await repeat(5, () => timed(affectedArgs, { cwd: dir, env: compiledEnv }));
    const affectedFromSourceSeconds70 = await repeat(3, () => timed(affectedArgs, { cwd: dir, env: sourceEnv }));
    const serviceStartSeconds = await repeat(5, () => serviceStart(compiledEnv));
    const serviceStartFromSourceSeconds = await repeat(3, () => serviceStart(sourceEnv));
    const round = (v: number): number => Number(v.toFixed(3));
    const figures = {
      baseline: '`node -e 0` in the same run (the floor), and the same commands from the TypeScript sources through tsx (TANDEM_FROM_SOURCE=1)',
      nodeFloorSeconds: round(nodeFloorSeconds),
      helpSeconds: round(helpSeconds),
      helpFromSourceSeconds: round(helpFromSourceSeconds),
      affectedSeconds70: round(affectedSeconds70),
      affectedFromSourceSeconds70: round(affectedFromSourceSeconds70),
      serviceStartSeconds: round(serviceStartSeconds),
      serviceStartFromSourceSeconds: round(serviceStartFromSourceSeconds),
      helpOverFloor: round(helpSeconds / nodeFloorSeconds),
      sourceOverCompiledHelp: round(helpFromSourceSeconds / helpSeconds),
    };
    process.stderr.write(
      `node -e 0 ${figures.nodeFloorSeconds} s; --help ${figures.helpSeconds} s (from source ${figures.helpFromSourceSeconds} s); affected on ${PACKAGES} packages ${figures.affectedSeconds70} s (from source ${figures.affectedFromSourceSeconds70} s); ranking ready ${figures.serviceStartSeconds} s (from source ${figures.serviceStartFromSourceSeconds} s)\n`,
    );
    process.stdout.write(
      `${JSON.stringify({
        bench: 'startup',
        figures,
        targets: {
          helpSeconds: { value: figures.helpSeconds, max: 0.25 },
          affectedSeconds70: { value: figures.affectedSeconds70, max: 0.4 },
          serviceStartSeconds: { value: figures.serviceStartSeconds, max: 0.3 },
        },
      })}\n`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
