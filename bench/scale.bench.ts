/**
 * `npm run bench -- scale` (issue 33): what looks, reports, the dashboard and corpus reads cost at
 * production sizes, on local files and on ClickHouse, against the full load Tandem did before (the
 * baseline: bench/support/full-load-judge.ts, measured in the same run on the same stored data).
 *
 * Synthetic experiments are written straight into each store as a run leaves them (test/support/
 * stored-experiment.ts, each trial's metrics stored as the executor stores them): 12 trials × 25k pairs
 * (300k) and 12 × 100k (1.2M).
 *
 *   lookMsAt300k, lookMsAt1_2M      a sequential look after the last trial (local files), median of 5;
 *                                   lookGrowth = their ratio. …ClickHouse: the same on ClickHouse
 *   experimentSecondsWholeLooks     all looks of the 1.2M experiment (after trials 4..12) as it ran (local);
 *                                   baseline …FullLoad: the same looks loading everything
 *   trialMetricsSecondsAt1_2M       the once-per-trial cost that replaced them: computing and storing the
 *                                   12 trials' metrics as each completed
 *   reportSecondsAt1_2M, reportPeakRssMbAt1_2M   `tandem report --format json`, a process of its own
 *                                   (local; …ClickHouse), baselines …FullLoad
 *   dashboardSecondsAt1_2M, dashboardPeakRssMbAt1_2M   the experiment's page from `tandem serve` (peak RSS
 *                                   of the server process)
 *   calibratePeakRssMbAt1_2M       what `tandem calibrate` does after its replay, on the same experiment (as if it
 *                                   were A/A), a process of its own; baseline …FullLoad
 *   corpusStartSecondsAt10M         ClickHouse tier of 10M records over 23 h: `tandem replay` started until
 *                                   the first request reaches the arm; corpusFirstRowSeconds… the store's read
 *                                   alone, sliced against one sorted query over the window (the read before)
 *   corpusLsMsAt10M                 `corpus.tiers()` from the summary; baseline …Scan: GROUP BY over the tier
 *
 * `--quick` divides every size by 10 (a check that the bench runs, not figures).
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { createClient } from '@clickhouse/client';
import { loadConfig } from '../core/index.js';
import { createStore, type Store } from '../store/index.js';
import { lookAtExperiment } from '../harness/index.js';
import { startClickHouse } from '../test/support/private-services.js';
import { writeStoredExperiment } from '../test/support/stored-experiment.js';
import { fullLoadLook } from './support/full-load-judge.js';
import { fillCorpusTier } from './support/scale-corpus.js';
import { median } from './support/median.js';

const BIN = join(import.meta.dirname, '..', 'bin', 'tandem.js');
const MEASURE = join(import.meta.dirname, 'support', 'scale-measure.ts');
const HOUR = 3_600_000;

const WORKLOAD_LINES = [
  'workloads:',
  '  - name: scale',
  '    tier: scale',
  '  - name: big',
  '    tier: big',
  '    corpus: { lookback: 24h }',
  '    replay: { rate: 50, concurrency: 8, timeout: 2s }',
];

async function project(storeLine: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-scale-'));
  await writeFile(join(dir, 'tandem.config.yaml'), [storeLine, ...WORKLOAD_LINES, ''].join('\n'));
  return dir;
}

/** One measurement in a child process (scale-measure.ts). */
async function measured(mode: string, dir: string, id: string): Promise<{ seconds: number; peakRssMb: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MEASURE, mode, dir, id], {
    cwd: join(import.meta.dirname, '..'),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number];
  const line = err.split('\n').find((l) => l.startsWith('SCALE '));
  if (code !== 0 || line === undefined) throw new Error(`${mode} exited ${code}: ${err.slice(-1_000)}`);
  return JSON.parse(line.slice('SCALE '.length)) as { seconds: number; peakRssMb: number };
}

/** The experiment's page from `tandem serve`: seconds for the response and the server's peak RSS. */
async function dashboardPage(dir: string, id: string): Promise<{ seconds: number; peakRssMb: number }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--listen', '127.0.0.1:0', '--json'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
  const killer = setTimeout(() => child.kill('SIGKILL'), 600_000);
  try {
    let url: string | undefined;
    for await (const line of createInterface({ input: child.stdout })) {
      url = (JSON.parse(line) as { url?: string }).url;
      if (url) break;
    }
    if (!url) throw new Error('tandem serve printed no url');
    const started = performance.now();
    const response = await fetch(`${url}/experiments/${id}`);
    const page = await response.text();
    if (response.status !== 200 || !page.includes('latency')) throw new Error(`experiment page: ${response.status} ${page.slice(0, 300)}`);
    const seconds = (performance.now() - started) / 1000;
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return { seconds, peakRssMb: Number(hwm?.[1] ?? Number.NaN) / 1024 };
  } finally {
    clearTimeout(killer);
    child.kill('SIGTERM');
    await once(child, 'close');
  }
}

async function medianLookMs(store: Store, id: string, workload: Awaited<ReturnType<typeof loadConfig>>['config']['workloads'][number]): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await lookAtExperiment(store, id, { workload });
    times.push(performance.now() - started);
  }
  return median(times);
}

interface BackendFigures {
  lookMsAt300k: number;
  lookMsAt1_2M: number;
  wholeLooksSeconds: number;
  wholeLooksSecondsFullLoad: number;
  trialMetricsSeconds: number;
  report: { seconds: number; peakRssMb: number };
  reportFullLoad: { seconds: number; peakRssMb: number };
  dashboard: { seconds: number; peakRssMb: number };
  calibrate: { seconds: number; peakRssMb: number };
  calibrateFullLoad: { seconds: number; peakRssMb: number };
}

async function measureBackend(dir: string, scale: number, log: (line: string) => void): Promise<BackendFigures> {
  const { config } = await loadConfig({ cwd: dir });
  const workload = config.workloads[0]!;
  const store = createStore(config.store, { cwd: dir });
  await store.init();
  try {
    log(`writing 12 × ${25_000 / scale} pairs`);
    await writeStoredExperiment(store, { id: 'exp-300k', trials: 12, pairsPerTrial: 25_000 / scale, shift: 0.02 });
    let wholeLooksMs = 0;
    let wholeLooksFullLoadMs = 0;
    log(`writing 12 × ${100_000 / scale} pairs, looking after each trial from the 4th (and the full-load baseline)`);
    const written = await writeStoredExperiment(store, {
      id: 'exp-1200k',
      trials: 12,
      pairsPerTrial: 100_000 / scale,
      shift: 0.02,
      afterTrial: async (completed) => {
        if (completed < 4) return;
        let started = performance.now();
        await lookAtExperiment(store, 'exp-1200k', { workload });
        wholeLooksMs += performance.now() - started;
        started = performance.now();
        await fullLoadLook(store, 'exp-1200k', workload);
        wholeLooksFullLoadMs += performance.now() - started;
        log(`  look after ${completed}: total ${(wholeLooksMs / 1000).toFixed(2)} s, full load ${(wholeLooksFullLoadMs / 1000).toFixed(1)} s`);
      },
    });
    const lookMsAt300k = await medianLookMs(store, 'exp-300k', workload);
    const lookMsAt1_2M = await medianLookMs(store, 'exp-1200k', workload);
    log('report (own process), then its full-load baseline, then the dashboard page');
    const report = await measured('report', dir, 'exp-1200k');
    const reportFullLoad = await measured('report-full-load', dir, 'exp-1200k');
    const dashboard = await dashboardPage(dir, 'exp-1200k');
    log('calibration of the same experiment (as if A/A), then its full-load baseline');
    const calibrate = await measured('calibrate', dir, 'exp-1200k');
    const calibrateFullLoad = await measured('calibrate-full-load', dir, 'exp-1200k');
    return {
      calibrate,
      calibrateFullLoad,
      lookMsAt300k,
      lookMsAt1_2M,
      wholeLooksSeconds: wholeLooksMs / 1000,
      wholeLooksSecondsFullLoad: wholeLooksFullLoadMs / 1000,
      trialMetricsSeconds: written.measureMs / 1000,
      report,
      reportFullLoad,
      dashboard,
    };
  } finally {
    await store.close();
  }
}

/** Seconds from `tandem replay` starting to the first request reaching an arm. */
async function replayStartSeconds(dir: string): Promise<number> {
  let firstMs: number | undefined;
  const arm = createServer((req, res) => {
    firstMs ??= performance.now();
    req.resume();
    res.end('{}');
  });
  arm.listen(0, '127.0.0.1');
  await once(arm, 'listening');
  const url = `http://127.0.0.1:${(arm.address() as AddressInfo).port}`;
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [BIN, 'replay', '--workload', 'big', '--control', url, '--treatment', url, '--trials', '1', '--warmup', '0s', '--measure', '3s', '--json'],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  await once(child, 'close');
  clearTimeout(killer);
  arm.close();
  if (firstMs === undefined) throw new Error(`no request reached the arm: ${err.slice(-1_000)}`);
  return (firstMs - started) / 1000;
}

interface CorpusFigures {
  corpusStartSecondsAt10M: number;
  corpusFirstRowSecondsSliced: number;
  corpusFirstRowSecondsOneQuery: number;
  corpusLsMsAt10M: number;
  corpusLsMsAt10MScan: number;
}

async function corpusFigures(dir: string, url: string, scale: number): Promise<CorpusFigures> {
  const { config } = await loadConfig({ cwd: dir });
  const store = createStore(config.store, { cwd: dir });
  const client = createClient({ url });
  try {
    const records = 10_000_000 / scale;
    const endMs = Date.now() - 60_000;
    await fillCorpusTier(url, 'scale', { tier: 'big', records, spanMs: 23 * HOUR, endMs });
    const lsTimes: number[] = [];
    const scanTimes: number[] = [];
    for (let i = 0; i < 5; i++) {
      let started = performance.now();
      const tiers = await store.corpus.tiers();
      lsTimes.push(performance.now() - started);
      if (tiers.find((t) => t.tier === 'big')?.count !== records) throw new Error(`corpus ls counted ${JSON.stringify(tiers)}`);
      started = performance.now();
      await (
        await client.query({
          query: 'SELECT tier, count(), min(time_ms), max(time_ms), sum(size_bytes) FROM scale.corpus GROUP BY tier',
          format: 'JSONEachRow',
        })
      ).json();
      scanTimes.push(performance.now() - started);
    }
    const sinceMs = Date.now() - 24 * HOUR;
    let started = performance.now();
    const reader = store.corpus.read('big', { sinceMs, untilMs: Date.now() + 1 })[Symbol.asyncIterator]();
    await reader.next();
    const sliced = (performance.now() - started) / 1000;
    await reader.return?.();
    started = performance.now();
    const oneQuery = await client.query({
      query: `SELECT tier, time_ms, id, method, path, headers, body, body_truncated, sample_rate, sample_mode, grpc FROM scale.corpus WHERE tier = 'big' AND time_ms >= ${sinceMs} AND time_ms < ${Date.now() + 1} ORDER BY time_ms, id`,
      format: 'JSONEachRow',
    });
    const stream = oneQuery.stream();
    for await (const rows of stream) if ((rows as unknown[]).length > 0) break;
    const whole = (performance.now() - started) / 1000;
    oneQuery.close();
    return {
      corpusStartSecondsAt10M: await replayStartSeconds(dir),
      corpusFirstRowSecondsSliced: sliced,
      corpusFirstRowSecondsOneQuery: whole,
      corpusLsMsAt10M: median(lsTimes),
      corpusLsMsAt10MScan: median(scanTimes),
    };
  } finally {
    await client.close();
    await store.close();
  }
}

export async function run(args: string[]): Promise<void> {
  const scale = args.includes('--quick') ? 10 : 1;
  const log = (line: string): void => void process.stderr.write(`scale: ${line}\n`);
  const clickhouse = await startClickHouse();
  const localDir = await project('store: { kind: local, dir: .tandem }');
  const clickhouseDir = await project(`store: { kind: clickhouse, url: "${clickhouse.url}", database: scale }`);
  try {
    log('local files');
    const local = await measureBackend(localDir, scale, log);
    log('ClickHouse');
    const ch = await measureBackend(clickhouseDir, scale, log);
    log('corpus of 10M records (ClickHouse)');
    const corpus = await corpusFigures(clickhouseDir, clickhouse.url, scale);
    const round = (v: number, digits = 3): number => Number(v.toFixed(digits));
    const figures = {
      lookMsAt300k: round(local.lookMsAt300k, 1),
      lookMsAt1_2M: round(local.lookMsAt1_2M, 1),
      lookGrowth: round(local.lookMsAt1_2M / local.lookMsAt300k),
      lookMsAt1_2MClickHouse: round(ch.lookMsAt1_2M, 1),
      lookGrowthClickHouse: round(ch.lookMsAt1_2M / ch.lookMsAt300k),
      experimentSecondsWholeLooks: round(local.wholeLooksSeconds),
      experimentSecondsWholeLooksFullLoad: round(local.wholeLooksSecondsFullLoad),
      experimentSecondsWholeLooksClickHouse: round(ch.wholeLooksSeconds),
      experimentSecondsWholeLooksFullLoadClickHouse: round(ch.wholeLooksSecondsFullLoad),
      trialMetricsSecondsAt1_2M: round(local.trialMetricsSeconds),
      trialMetricsSecondsAt1_2MClickHouse: round(ch.trialMetricsSeconds),
      reportSecondsAt1_2M: round(local.report.seconds),
      reportSecondsAt1_2MFullLoad: round(local.reportFullLoad.seconds),
      reportPeakRssMbAt1_2M: round(local.report.peakRssMb, 1),
      reportPeakRssMbAt1_2MFullLoad: round(local.reportFullLoad.peakRssMb, 1),
      reportSecondsAt1_2MClickHouse: round(ch.report.seconds),
      reportSecondsAt1_2MFullLoadClickHouse: round(ch.reportFullLoad.seconds),
      reportPeakRssMbAt1_2MClickHouse: round(ch.report.peakRssMb, 1),
      reportPeakRssMbAt1_2MFullLoadClickHouse: round(ch.reportFullLoad.peakRssMb, 1),
      dashboardSecondsAt1_2M: round(local.dashboard.seconds),
      dashboardPeakRssMbAt1_2M: round(local.dashboard.peakRssMb, 1),
      dashboardSecondsAt1_2MClickHouse: round(ch.dashboard.seconds),
      dashboardPeakRssMbAt1_2MClickHouse: round(ch.dashboard.peakRssMb, 1),
      calibrateSecondsAt1_2M: round(local.calibrate.seconds),
      calibratePeakRssMbAt1_2M: round(local.calibrate.peakRssMb, 1),
      calibratePeakRssMbAt1_2MFullLoad: round(local.calibrateFullLoad.peakRssMb, 1),
      calibrateSecondsAt1_2MClickHouse: round(ch.calibrate.seconds),
      calibratePeakRssMbAt1_2MClickHouse: round(ch.calibrate.peakRssMb, 1),
      calibratePeakRssMbAt1_2MFullLoadClickHouse: round(ch.calibrateFullLoad.peakRssMb, 1),
      corpusStartSecondsAt10M: round(corpus.corpusStartSecondsAt10M),
      corpusFirstRowSecondsSliced: round(corpus.corpusFirstRowSecondsSliced),
      corpusFirstRowSecondsOneQuery: round(corpus.corpusFirstRowSecondsOneQuery),
      corpusLsMsAt10M: round(corpus.corpusLsMsAt10M, 1),
      corpusLsMsAt10MScan: round(corpus.corpusLsMsAt10MScan, 1),
    };
    // The memory ceiling docs/harness.md documents for a report or dashboard page, whatever the experiment's size.
    const CEILING_MB = 400;
    const targets = {
      lookMsAt1_2M: { value: figures.lookMsAt1_2M, max: 500 },
      lookGrowth: { value: figures.lookGrowth, max: 2 },
      lookGrowthClickHouse: { value: figures.lookGrowthClickHouse, max: 2 },
      experimentSecondsWholeLooks: { value: figures.experimentSecondsWholeLooks, max: round(figures.experimentSecondsWholeLooksFullLoad / 10) },
      reportSecondsAt1_2M: { value: figures.reportSecondsAt1_2M, max: round(figures.reportSecondsAt1_2MFullLoad / 2) },
      reportSecondsAt1_2MClickHouse: { value: figures.reportSecondsAt1_2MClickHouse, max: round(figures.reportSecondsAt1_2MFullLoadClickHouse / 2) },
      reportPeakRssMbAt1_2M: { value: figures.reportPeakRssMbAt1_2M, max: CEILING_MB },
      reportPeakRssMbAt1_2MClickHouse: { value: figures.reportPeakRssMbAt1_2MClickHouse, max: CEILING_MB },
      dashboardPeakRssMbAt1_2M: { value: figures.dashboardPeakRssMbAt1_2M, max: CEILING_MB },
      dashboardPeakRssMbAt1_2MClickHouse: { value: figures.dashboardPeakRssMbAt1_2MClickHouse, max: CEILING_MB },
      calibratePeakRssMbAt1_2M: { value: figures.calibratePeakRssMbAt1_2M, max: CEILING_MB },
      calibratePeakRssMbAt1_2MClickHouse: { value: figures.calibratePeakRssMbAt1_2MClickHouse, max: CEILING_MB },
      corpusStartSecondsAt10M: { value: figures.corpusStartSecondsAt10M, max: 5 },
      corpusLsMsAt10M: { value: figures.corpusLsMsAt10M, max: 100 },
    };
    process.stdout.write(`${JSON.stringify({ bench: 'scale', figures, targets })}\n`);
  } finally {
    await clickhouse.stop();
    await rm(localDir, { recursive: true, force: true });
    await rm(clickhouseDir, { recursive: true, force: true });
  }
}
