/**
 * `npm run bench -- dashboard`: `tandem serve` over a local store of 10,000
 * experiments, against reading the same data through the CLI in the same run.
 *
 *   listMs          the list's first page (50 rows, newest first) over HTTP, median of 15 requests
 *   listColdMs      the same, the first request after the server started (the summary index read whole)
 *   experimentMs    a finished experiment's page (its report judged from 4,000 outcomes; nothing cached),
 *                   median over 9 different experiments, each opened once
 *   statusListMs    baseline: `tandem status --json --limit 50` (the same 50 experiments), median of 5
 *   statusExperimentMs  baseline: `tandem status <id> --json` (the record and its events, no report), median of 5
 *   liveLagMs       a `progress` event appended to the store until Chromium shows it on the running experiment's
 *                   page (server-sent events; the page's own clock at the DOM change), median of 20
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createLocalStore, type Store } from '../store/index.js';
import { launchChromium, pagePredicates } from '../test/support/browser.js';
import { completedTrials, experiment, seedOutcomes } from '../test/support/dashboard-fixtures.js';
import { median } from './support/median.js';

const BIN = join(import.meta.dirname, '..', 'bin', 'tandem.js');
const EXPERIMENTS = 10_000;
const T0 = Date.UTC(2026, 9, 1);

async function seed(store: Store): Promise<string[]> {
  for (let i = 0; i < EXPERIMENTS; i++) {
    const status = i % 10 === 0 ? 'regressed' : i % 17 === 0 ? 'cancelled' : 'passed';
    await store.experiments.put(
      experiment({
        id: `exp-${String(i).padStart(5, '0')}`,
        workload: ['ranking', 'query'][i % 2]!,
        status,
        createdAtMs: T0 + i * 60_000,
        updatedAtMs: T0 + i * 60_000 + 1,
        trials: completedTrials(1 + (i % 6), T0),
        spec: { kind: 'experiment', stage: i % 5 === 0 ? 'land' : 'diff', change: `change-${i % 997}` },
        verdict: { outcome: status === 'cancelled' ? 'no data' : status },
      }),
    );
  }
  const judged: string[] = [];
  for (let i = 0; i < 9; i++) {
    const id = `exp-judged-${i}`;
    await store.experiments.put(
      experiment({ id, status: 'regressed', createdAtMs: T0 - 1_000 - i, updatedAtMs: T0, trials: completedTrials(10, T0), verdict: { outcome: 'regressed' } }),
    );
    await seedOutcomes(store, id, 10, { slowdown: 1.1, differ: i % 2 === 0, pairs: 200 });
    judged.push(id);
  }
  return judged;
}

async function cli(args: readonly string[], cwd: string): Promise<number> {
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`tandem ${args.join(' ')} exited ${code}: ${err.slice(-500)}`))));
  });
  return performance.now() - started;
}

async function serve(cwd: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--listen', '127.0.0.1:0', '--json'], { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000);
  for await (const line of lines) {
    const ready = JSON.parse(line) as { url?: string };
    if (ready.url) {
      clearTimeout(deadline);
      return { url: ready.url, child };
    }
  }
  throw new Error('tandem serve exited before it was ready');
}

/** Time to the whole page; a page without what it must show (a fast error page, an empty list) fails the bench. */
async function timedGet(url: string, shows: (body: string) => boolean): Promise<number> {
  const started = performance.now();
  const response = await fetch(url);
  const body = await response.text();
  const elapsed = performance.now() - started;
  if (response.status !== 200 || !shows(body)) throw new Error(`GET ${url}: ${response.status}, not the page it should be: ${body.slice(0, 300)}`);
  return elapsed;
}

const fullFirstPage = (body: string): boolean =>
  (body.match(/<tr data-id="exp-\d{5}"/g) ?? []).length === 50 && body.includes('10009 experiment(s) · page 1 of 201');
const judgedReport = (body: string): boolean =>
  body.includes('stored verdict <strong>regressed</strong>') && body.includes('Judged metrics') && body.includes('data-chart=');

async function liveLag(url: string, store: Store): Promise<number[]> {
  await store.experiments.put(
    experiment({
      id: 'exp-live',
      status: 'running',
      createdAtMs: T0 - 5_000,
      updatedAtMs: T0,
      trials: [{ index: 0, attempt: 1, status: 'running', startedAtMs: T0 }],
    }),
  );
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(`${url}/experiments/exp-live`, { waitUntil: 'load' });
    await page.waitForFunction(pagePredicates.liveUpdated);
    const lags: number[] = [];
    for (let i = 0; i < 20; i++) {
      const rate = 1000 + i + 0.5; // shown as "1000.5", "1001.5", … on the Pairs/s card
      // The page's clock when its live region first holds the new figure (checked every animation frame).
      const seen = page.waitForFunction(pagePredicates.liveShows, rate.toFixed(1), { polling: 'raf', timeout: 10_000 });
      const appended = Date.now();
      await store.experiments.appendEvent({
        experimentId: 'exp-live',
        timeMs: appended,
        type: 'progress',
        data: {
          trial: 0,
          attempt: 1,
          phase: 'measure',
          elapsedMs: i * 1000,
          remainingMs: 1000,
          sentPairs: i,
          droppedPairs: 0,
          inflight: { control: 0, treatment: 0 },
          errors: { control: 0, treatment: 0 },
          rate,
        },
      });
      lags.push(Number(await (await seen).jsonValue()) - appended);
      // Events land at unrelated moments of the server's poll, as a worker's do.
      await new Promise((resolve) => setTimeout(resolve, 137 + ((i * 71) % 250)));
    }
    return lags;
  } finally {
    await browser.close();
  }
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-dashboard-'));
  let server: ChildProcess | undefined;
  try {
    await writeFile(
      join(dir, 'tandem.config.yaml'),
      'store: { kind: local, dir: .tandem }\nworkloads:\n  - { name: ranking, tier: ranking }\n  - { name: query, tier: query }\n',
    );
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    await store.init();
    const seedStart = performance.now();
    const judged = await seed(store);
    process.stderr.write(`seeded ${EXPERIMENTS} experiments (+9 with 4,000 outcomes each) in ${((performance.now() - seedStart) / 1000).toFixed(1)} s\n`);
    await cli(['--help'], dir); // builds the compiled CLI once, outside any timing
    const started = await serve(dir);
    server = started.child;
    const listColdMs = await timedGet(`${started.url}/`, fullFirstPage);
    const list: number[] = [];
    for (let i = 0; i < 15; i++) list.push(await timedGet(`${started.url}/`, fullFirstPage));
    const pages: number[] = [];
    for (const id of judged) pages.push(await timedGet(`${started.url}/experiments/${id}`, judgedReport));
    const statusList: number[] = [];
    const statusExperiment: number[] = [];
    for (let i = 0; i < 5; i++) {
      statusList.push(await cli(['status', '--json', '--limit', '50'], dir));
      statusExperiment.push(await cli(['status', judged[i]!, '--json'], dir));
    }
    const lags = await liveLag(started.url, store);
    const round = (v: number): number => Number(v.toFixed(1));
    const figures = {
      experiments: EXPERIMENTS,
      listMs: round(median(list)),
      listColdMs: round(listColdMs),
      experimentMs: round(median(pages)),
      statusListMs: round(median(statusList)),
      statusExperimentMs: round(median(statusExperiment)),
      listVsStatus: Number((median(statusList) / median(list)).toFixed(2)),
      experimentVsStatus: Number((median(statusExperiment) / median(pages)).toFixed(2)),
      liveLagMs: round(median(lags)),
      liveLagMaxMs: round(Math.max(...lags)),
    };
    process.stderr.write(
      `list page ${figures.listMs} ms (cold ${figures.listColdMs} ms) vs tandem status --json ${figures.statusListMs} ms; experiment page ${figures.experimentMs} ms vs tandem status <id> --json ${figures.statusExperimentMs} ms; live lag median ${figures.liveLagMs} ms, max ${figures.liveLagMaxMs} ms\n`,
    );
    const targets = {
      listMs: { value: figures.listMs, max: 100 },
      experimentMs: { value: figures.experimentMs, max: 200 },
      liveLagMs: { value: figures.liveLagMs, max: 1000 },
    };
    process.stdout.write(`${JSON.stringify({ bench: 'dashboard', figures, targets })}\n`);
  } finally {
    server?.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
}
