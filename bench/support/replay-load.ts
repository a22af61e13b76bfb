/**
 * Load generators for the replayer benchmark, one per process so each can be
 * pinned to its own core. Prints one JSON line of results.
 *
 *   replay-load.ts replayer   URL SECONDS CONCURRENCY   Tandem's paired replay, unthrottled
 *   replay-load.ts minimal    URL SECONDS CONCURRENCY   minimal paired undici loop (baseline)
 *   replay-load.ts fixed      URL SECONDS RATE          Tandem at a fixed rate: achieved rate, p99
 *   replay-load.ts reference  URL SECONDS RATE          minimal open-loop client measuring from the intended time
 *   replay-load.ts autocannon URL SECONDS CONNECTIONS   autocannon, one target
 *   replay-load.ts single     URL SECONDS RATE          open loop against one target: p50, p99 from the intended time
 *   replay-load.ts rss        URL STORE_DIR TIER        replay a large stored corpus; peak RSS
 */
import { Pool } from 'undici';
import { systemClock, type CorpusRecord, type RequestOutcome } from '../../core/index.js';
import { createLocalStore } from '../../store/index.js';
import { pairedReplay } from '../../replayer/index.js';

const [mode, url, third, fourth] = process.argv.slice(2) as [string, string, string, string];
// A parent that dies closes our stdin: never outlive it.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
if (!url?.startsWith('http://127.0.0.1:')) throw new Error('loopback targets only');

const identity = { experimentId: 'bench', trial: 0, attempt: 1, headerPrefix: 'x-tandem-', jobs: { control: 'bench.control', treatment: 'bench.treatment' } };

async function* endless(): AsyncGenerator<CorpusRecord> {
  for (let i = 0; ; i++) {
    yield {
      id: `r${i}`,
      tier: 'bench',
      timeMs: 0,
      method: 'GET',
      path: `/item/${i % 1000}`,
      headers: { accept: 'application/json' },
      body: '',
      bodyTruncated: false,
      sampleRate: 1,
      sampleMode: 'uniform',
    };
  }
}

/**
 * Open-loop pacing shared by the reference clients: sleep whole milliseconds, yield until due;
 * when behind schedule, still yield every 16 sends so responses are read. Returns the new yield counter.
 */
async function waitUntil(due: number, sinceYield: number): Promise<number> {
  if (performance.now() >= due) {
    if (sinceYield + 1 < 16) return sinceYield + 1;
    await new Promise((r) => setImmediate(r));
    return 0;
  }
  while (performance.now() < due) {
    if (due - performance.now() >= 1) await new Promise((r) => setTimeout(r, Math.floor(due - performance.now())));
    else await new Promise((r) => setImmediate(r));
  }
  return sinceYield;
}

const percentile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

async function replayer(seconds: number, concurrency: number): Promise<Record<string, number>> {
  let outcomes = 0;
  const result = await pairedReplay({
    records: endless(),
    arms: { control: url, treatment: url },
    ratePerSecond: 1_000_000,
    concurrency,
    timeoutMs: 10_000,
    warmupMs: 0,
    measureMs: seconds * 1000,
    seed: 1,
    identity,
    clock: systemClock,
    onOutcome: () => void outcomes++,
  });
  return { pairsPerSecond: result.sentPairs / (result.durationMs / 1000), droppedPairs: result.droppedPairs, outcomes };
}

async function minimal(seconds: number, concurrency: number): Promise<Record<string, number>> {
  const pools = [new Pool(url, { connections: concurrency }), new Pool(url, { connections: concurrency })];
  const end = performance.now() + seconds * 1000;
  let pairs = 0;
  let i = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      const path = `/item/${i++ % 1000}`;
      await Promise.all(pools.map(async (pool) => (await pool.request({ path, method: 'GET' })).body.dump()));
      pairs++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  await Promise.all(pools.map((p) => p.close()));
  return { pairsPerSecond: pairs / elapsed };
}

async function fixed(seconds: number, rate: number): Promise<Record<string, number>> {
  const latencies: number[] = [];
  const result = await pairedReplay({
    records: endless(),
    arms: { control: url, treatment: url },
    ratePerSecond: rate,
    concurrency: 256,
    timeoutMs: 10_000,
    warmupMs: 1_000,
    measureMs: seconds * 1000,
    seed: 1,
    identity,
    clock: systemClock,
    onOutcome: (o: RequestOutcome) => void latencies.push(o.latencyMs),
  });
  // A pair that was never sent (dropped at the in-flight cap, or cut at the window's end) is the tail a p99
  // measures: each of its two requests counts as answered at the deadline.
  const missedPairs = result.droppedPairs + result.cutPairs;
  for (let m = 0; m < 2 * missedPairs; m++) latencies.push(10_000);
  return {
    achievedRate: result.achievedRate,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    droppedPairs: result.droppedPairs,
    missedPairs,
    maxLagMs: result.maxLagMs,
  };
}

/**
 * The reference: the simplest open-loop client. Request i goes to each of `targets` pools
 * (2: a pair, the replayer's reference; 1: one target, for added-latency comparisons) at
 * start + i/rate, and latency is measured from then.
 */
async function openLoop(targets: 1 | 2, seconds: number, rate: number): Promise<Record<string, number>> {
  const pools = Array.from({ length: targets }, () => new Pool(url, { connections: 256 }));
  const latencies: number[] = [];
  const pending: Promise<void>[] = [];
  const start = performance.now();
  const warmupEnd = start + 1_000;
  const total = Math.floor(rate * (seconds + 1));
  let sinceYield = 0;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    sinceYield = await waitUntil(due, sinceYield);
    for (const pool of pools) {
      pending.push(
        pool.request({ path: `/item/${i % 1000}`, method: 'GET' }).then(async (res) => {
          await res.body.dump();
          if (due >= warmupEnd) latencies.push(performance.now() - due);
        }),
      );
    }
  }
  await Promise.all(pending);
  await Promise.all(pools.map((p) => p.close()));
  return { achievedRate: latencies.length / targets / seconds, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) };
}

async function cannon(seconds: number, connections: number): Promise<Record<string, number>> {
  const { default: autocannon } = await import('autocannon');
  const result = await autocannon({ url: `${url}/item/1`, connections, duration: seconds });
  return { requestsPerSecond: result.requests.average };
}

async function rss(storeDir: string, tier: string): Promise<Record<string, number>> {
  const store = createLocalStore({ dir: storeDir });
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
  let outcomes = 0;
  const result = await pairedReplay({
    records: store.corpus.read(tier, { sinceMs: 0 }),
    arms: { control: url, treatment: url },
    ratePerSecond: 1_000_000,
    concurrency: 64,
    timeoutMs: 10_000,
    warmupMs: 0,
    measureMs: 600_000,
    seed: 1,
    identity,
    clock: systemClock,
    onOutcome: () => void outcomes++,
  });
  clearInterval(timer);
  return {
    peakRssBytes: Math.max(peak, process.memoryUsage().rss),
    recordsRead: result.sentPairs + result.skippedTruncated,
    sentPairs: result.sentPairs,
    corpusExhausted: result.corpusExhausted ? 1 : 0,
  };
}

const run: Record<string, () => Promise<Record<string, number>>> = {
  replayer: () => replayer(Number(third), Number(fourth)),
  minimal: () => minimal(Number(third), Number(fourth)),
  fixed: () => fixed(Number(third), Number(fourth)),
  reference: () => openLoop(2, Number(third), Number(fourth)),
  autocannon: () => cannon(Number(third), Number(fourth)),
  single: () => openLoop(1, Number(third), Number(fourth)),
  rss: () => rss(third, fourth),
};
const task = run[mode];
if (!task) throw new Error(`unknown mode ${mode}`);
process.stdout.write(`${JSON.stringify({ mode, ...(await task()) })}\n`);
process.exit(0);
