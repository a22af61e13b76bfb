/**
 * `npm run bench -- cpu-settling` (issue 30, a measurement study): how a freshly started process's CPU per
 * request settles, and how much of its noise is its own helper threads. The example stack runs; fresh
 * ranking processes are started one at a time (as a trial deploys an arm) and sent recorded /rank requests
 * at a steady rate, the same records in every window; every window their CPU time is read from /proc (nanosecond schedstat), for the main
 * thread alone and for every thread (V8's compiler and GC helpers included), and divided by the requests
 * answered in the window.
 *
 *   cvEarly, cvLate               between fresh processes: the coefficient of variation of CPU per request
 *                                 in the window that ends `--warmup` seconds after start (what a trial with
 *                                 that warm-up measures) and in the last window
 *   cvEarlyMainThread, …Late      the same for the main thread alone
 *   windowSdEarly, windowSdLate   within a process, window to window (relative sd over its first and last
 *                                 three windows)
 *   helperShareEarly, …Late       share of the process's CPU spent outside its main thread
 *
 * Baseline: the late figures of the same processes (the steady state the early windows are judged against).
 * Options: --processes N (6), --seconds S (45), --rate R (30 requests/s), --window W (3 s), --warmup S (2).
 */
import { cpuNs, post, startRankingProcess } from './support/ranking-process.js';
import { rankingCorpus } from '../examples/stack/ranking-corpus.js';
import { startStack } from '../examples/stack/index.js';
import { median } from './support/median.js';
import { numberFlag } from './support/bench-args.js';

interface Window {
  readonly endS: number;
  readonly cpuPerRequestMs: number;
  readonly mainPerRequestMs: number;
}

async function measureProcess(
  env: NodeJS.ProcessEnv,
  bodies: readonly Buffer[],
  o: { seconds: number; rate: number; windowS: number },
): Promise<{ windows: Window[]; failed: number }> {
  const ranking = await startRankingProcess(env);
  const killer = setTimeout(() => ranking.child.kill('SIGKILL'), (o.seconds + 60) * 1000);
  try {
    const url = ranking.url;
    const pid = ranking.pid;
    const windows: Window[] = [];
    const startMs = performance.now();
    let answered = 0;
    let failed = 0;
    let sent = 0;
    let last = { ...cpuNs(pid), answered: 0 };
    const inFlight = new Set<Promise<void>>();
    // Bounded: a fixed count of requests at a fixed rate, and the loop's own deadline.
    const total = Math.round(o.seconds * o.rate);
    while (sent < total && performance.now() - startMs < (o.seconds + 10) * 1000) {
      const dueMs = startMs + (sent * 1000) / o.rate;
      const waitMs = dueMs - performance.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      const p = post(url, bodies[sent % bodies.length]!).then((ok) => {
        if (ok) answered++;
        else failed++;
        inFlight.delete(p);
      });
      inFlight.add(p);
      sent++;
      if (sent % Math.round(o.rate * o.windowS) === 0) {
        const now = cpuNs(pid);
        const requests = answered - last.answered;
        if (requests > 0)
          windows.push({
            endS: (performance.now() - startMs) / 1000,
            cpuPerRequestMs: (now.all - last.all) / 1e6 / requests,
            mainPerRequestMs: (now.main - last.main) / 1e6 / requests,
          });
        last = { ...now, answered };
      }
    }
    await Promise.all(inFlight);
    return { windows, failed };
  } finally {
    clearTimeout(killer);
    await ranking.stop();
  }
}

const relativeSd = (values: readonly number[]): number => {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1)) / mean;
};

export async function run(args: string[]): Promise<void> {
  const processes = numberFlag(args, 'processes', 6, { min: 1, max: 64, integer: true });
  const seconds = numberFlag(args, 'seconds', 45, { min: 5, max: 3_600 });
  const rate = numberFlag(args, 'rate', 30, { min: 1, max: 1_000 });
  const windowS = numberFlag(args, 'window', 3, { min: 0.5, max: 60 });
  const warmupS = numberFlag(args, 'warmup', 2, { min: 0, max: 60 });
  const stack = await startStack({ shards: 4 });
  try {
    const env = { ...process.env, FEATURES_URL: stack.urls.features, INFERENCE_URL: stack.urls.gateway };
    // Every window sends the same records, as both arms of a trial get the same ones: what varies is the process.
    const bodies = rankingCorpus(Math.round(rate * windowS)).map((r) => Buffer.from(r.body, 'base64'));
    const series: Window[][] = [];
    let failedRequests = 0;
    for (let p = 0; p < processes; p++) {
      const { windows, failed } = await measureProcess(env, bodies, { seconds, rate, windowS });
      series.push(windows);
      failedRequests += failed;
      process.stderr.write(
        `cpu-settling: process ${p + 1}: ${windows.map((w) => `${w.cpuPerRequestMs.toFixed(2)}/${w.mainPerRequestMs.toFixed(2)}`).join(' ')} ms/request (all threads/main)${failed > 0 ? `, ${failed} request(s) failed` : ''}\n`,
      );
    }
    // The window a trial with `warmupS` of warm-up measures: the first one ending after warm-up + one window.
    const early = (w: readonly Window[]): Window => w.find((x) => x.endS >= warmupS + windowS) ?? w[0]!;
    const late = (w: readonly Window[]): Window => w[w.length - 1]!;
    const cv = (pick: (w: readonly Window[]) => Window, field: 'cpuPerRequestMs' | 'mainPerRequestMs'): number => relativeSd(series.map((s) => pick(s)[field]));
    const helper = (pick: (w: readonly Window[]) => Window): number => median(series.map((s) => 1 - pick(s).mainPerRequestMs / pick(s).cpuPerRequestMs));
    const round = (v: number): number => Number(v.toFixed(4));
    const figures = {
      cvEarly: round(cv(early, 'cpuPerRequestMs')),
      cvLate: round(cv(late, 'cpuPerRequestMs')),
      cvEarlyMainThread: round(cv(early, 'mainPerRequestMs')),
      cvLateMainThread: round(cv(late, 'mainPerRequestMs')),
      windowSdEarly: round(median(series.map((s) => relativeSd(s.slice(0, 3).map((w) => w.cpuPerRequestMs))))),
      windowSdLate: round(median(series.map((s) => relativeSd(s.slice(-3).map((w) => w.cpuPerRequestMs))))),
      helperShareEarly: round(helper(early)),
      helperShareLate: round(helper(late)),
      cpuPerRequestMsLate: round(median(series.map((s) => late(s).cpuPerRequestMs))),
    };
    // A study, not a gate: the target says only that the steady state is quieter than what a trial measures now.
    process.stdout.write(`${JSON.stringify({ bench: 'cpu-settling', figures, targets: { cvLate: { value: figures.cvLate, max: figures.cvEarly } } })}\n`);
  } finally {
    await stack.stop();
  }
}
