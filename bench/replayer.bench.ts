/**
 * `npm run bench -- replayer`, all against one loopback target (core 0),
 * load generators on core 1, 3 interleaved rounds:
 * - max paired throughput: Tandem's replay unthrottled vs a minimal paired
 *   undici loop (target >= 0.8x), with wrk and autocannon single-target req/s
 *   for scale;
 * - at a fixed 2,000 pairs/s: achieved rate and p99 against a minimal
 *   open-loop client measuring from the intended send time (target: within
 *   1 ms), every pair not sent (dropped or cut) counted in the p99 as answered
 *   at the 10 s deadline and reported beside it (target: none);
 * - peak RSS while streaming a 1M-record stored corpus (target < 250 MB).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalStore } from '../store/index.js';
import type { CorpusRecord } from '../core/index.js';
import { startChild, type BenchChild } from './support/processes.js';
import { ensureWrk, runWrk } from './support/wrk.js';
import { median } from './support/median.js';

const here = import.meta.dirname;
const tsx = ['--import', 'tsx'];

async function load(mode: string, args: string[]): Promise<Record<string, number>> {
  const child = await startChild([...tsx, join(here, 'support', 'replay-load.ts'), mode, ...args], { core: 1, readyKey: 'mode', timeoutMs: 600_000 });
  await child.stop();
  return child.info as Record<string, number>;
}

async function writeLargeCorpus(dir: string, count: number): Promise<void> {
  const store = createLocalStore({ dir });
  const now = Date.now();
  const batch: CorpusRecord[] = [];
  for (let i = 0; i < count; i++) {
    batch.push({
      id: `r${i}`,
      tier: 'big',
      timeMs: now - 3 * 3_600_000 + Math.floor((i * 3 * 3_600_000) / count),
      method: 'POST',
      path: `/rank?i=${i}`,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: Buffer.from(JSON.stringify({ surface: 'home', viewer: i % 10_000, candidates: [i % 5000, (i * 7) % 5000, (i * 13) % 5000] })).toString('base64'),
      bodyTruncated: false,
      sampleRate: 1e-4,
      sampleMode: 'uniform',
    });
    if (batch.length === 20_000) await store.corpus.append(batch.splice(0));
  }
  await store.corpus.append(batch);
}

export async function run(): Promise<void> {
  ensureWrk();
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-replayer-'));
  let target: BenchChild | undefined;
  try {
    target = await startChild([...tsx, join(here, 'support', 'upstream.ts')], { core: 0 });
    const url = target.info.url as string;
    const rounds: Record<string, number[]> = { replayer: [], minimal: [], wrk: [], autocannon: [] };
    await load('minimal', [url, '2', '32']); // warm the target
    for (let round = 0; round < 3; round++) {
      rounds.minimal!.push((await load('minimal', [url, '5', '32'])).pairsPerSecond!);
      rounds.replayer!.push((await load('replayer', [url, '5', '32'])).pairsPerSecond!);
      rounds.wrk!.push(runWrk(`${url}/item/1`, { seconds: 5, connections: 32, core: 1 }).requestsPerSecond);
      rounds.autocannon!.push((await load('autocannon', [url, '5', '32'])).requestsPerSecond!);
      console.log(
        `round ${round + 1}: replayer ${rounds.replayer!.at(-1)!.toFixed(0)} pairs/s, minimal loop ${rounds.minimal!.at(-1)!.toFixed(0)} pairs/s, wrk ${rounds.wrk!.at(-1)!.toFixed(0)} req/s, autocannon ${rounds.autocannon!.at(-1)!.toFixed(0)} req/s`,
      );
    }
    // A fresh target for the latency comparison: after millions of requests at full speed, the
    // first one's heap and GC pauses would dominate a p99 at 4,000 requests per second.
    await target.stop();
    target = await startChild([...tsx, join(here, 'support', 'upstream.ts')], { core: 0 });
    const fresh = target.info.url as string;
    await load('reference', [fresh, '2', '2000']);
    const fixedRuns: Record<string, number>[] = [];
    const referenceRuns: Record<string, number>[] = [];
    for (let round = 0; round < 3; round++) {
      fixedRuns.push(await load('fixed', [fresh, '5', '2000']));
      referenceRuns.push(await load('reference', [fresh, '5', '2000']));
      console.log(
        `fixed 2000 pairs/s, round ${round + 1}: replayer ${fixedRuns.at(-1)!.achievedRate!.toFixed(1)} pairs/s p99 ${fixedRuns.at(-1)!.p99Ms!.toFixed(3)} ms; reference p99 ${referenceRuns.at(-1)!.p99Ms!.toFixed(3)} ms`,
      );
    }
    console.log('writing a 1M-record corpus …');
    await writeLargeCorpus(join(dir, 'store'), 1_000_000);
    const memory = await load('rss', [fresh, join(dir, 'store'), 'big']);
    console.log(`1M-record corpus: ${memory.recordsRead} records streamed, peak RSS ${(memory.peakRssBytes! / 1_048_576).toFixed(0)} MB`);

    const figures = {
      baseline: 'a minimal paired undici loop (throughput) and a minimal open-loop client (fixed-rate p99), in the same run',
      replayerPairsPerSecond: Math.round(median(rounds.replayer!)),
      minimalLoopPairsPerSecond: Math.round(median(rounds.minimal!)),
      wrkRequestsPerSecond: Math.round(median(rounds.wrk!)),
      autocannonRequestsPerSecond: Math.round(median(rounds.autocannon!)),
      replayerVsMinimalLoop: Number((median(rounds.replayer!) / median(rounds.minimal!)).toFixed(3)),
      minimalLoopPairsVsWrkRequests: Number((median(rounds.minimal!) / median(rounds.wrk!)).toFixed(3)),
      fixedRateAchievedShare: Number((median(fixedRuns.map((r) => r.achievedRate!)) / 2000).toFixed(4)),
      fixedRateMissedPairs: Math.max(...fixedRuns.map((r) => r.missedPairs!)),
      fixedRateP99Ms: Number(median(fixedRuns.map((r) => r.p99Ms!)).toFixed(3)),
      referenceP99Ms: Number(median(referenceRuns.map((r) => r.p99Ms!)).toFixed(3)),
      fixedRateP99MinusReferenceMs: Number((median(fixedRuns.map((r) => r.p99Ms!)) - median(referenceRuns.map((r) => r.p99Ms!))).toFixed(3)),
      corpusRecordsStreamed: memory.recordsRead!,
      peakRssMb: Math.round(memory.peakRssBytes! / 1_048_576),
    };
    console.log(
      JSON.stringify({
        bench: 'replayer',
        figures,
        targets: {
          replayerVsMinimalLoop: { value: figures.replayerVsMinimalLoop, min: 0.8 },
          fixedRateAchievedShare: { value: figures.fixedRateAchievedShare, min: 0.995 },
          fixedRateMissedPairs: { value: figures.fixedRateMissedPairs, max: 0 },
          fixedRateP99MinusReferenceMs: { value: figures.fixedRateP99MinusReferenceMs, max: 1 },
          peakRssMb: { value: figures.peakRssMb, max: 250 },
        },
      }),
    );
  } finally {
    await target?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
