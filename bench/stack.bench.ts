/**
 * `npm run bench -- stack`: the example stack's own figures.
 * - start-up: whole stack in-process, and fully isolated (5 child processes),
 *   against one bare `node --import tsx` process start in the same run;
 * - the `latency` fault: ranking compute seconds per request with +5% and
 *   +50% work against a clean ranking, same requests, interleaved rounds;
 * - the levels table: work units and NDCG@10 against level 0 per level
 *   (docs/example-stack.md quotes it).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { ndcgAtK } from '../harness/index.js';
import { metricTotal, productionRequest, startStack, type Stack } from '../examples/stack/index.js';
import { median } from './support/median.js';

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const response = await fetch(url, { method: 'POST', body: JSON.stringify(body), headers });
  return response.json();
}

async function bareProcessStartMs(): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', 'process.stdout.write("ready\\n")'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await once(child, 'exit');
  return performance.now() - started;
}

async function startMs(isolated: boolean): Promise<number> {
  const started = performance.now();
  const stack = await startStack(isolated ? { isolate: ['query', 'ranking', 'features', 'gateway', 'prediction'] } : {});
  const elapsed = performance.now() - started;
  await stack.stop();
  return elapsed;
}

/** Ranking compute seconds per request over `count` requests. */
async function computePerRequest(stack: Stack, count: number, seed: number): Promise<number> {
  const before = await metricTotal(stack.urls.ranking, 'compute_seconds_total');
  for (let i = 0; i < count; i++) await post(`${stack.urls.query}/recommend`, productionRequest(i, seed));
  return ((await metricTotal(stack.urls.ranking, 'compute_seconds_total')) - before) / count;
}

export async function run(): Promise<void> {
  const bare: number[] = [];
  const inProcess: number[] = [];
  const isolated: number[] = [];
  for (let round = 0; round < 3; round++) {
    bare.push(await bareProcessStartMs());
    inProcess.push(await startMs(false));
    isolated.push(await startMs(true));
  }
  const startIsolatedMs = median(isolated);
  console.log(
    `start-up: in-process ${median(inProcess).toFixed(0)} ms, isolated ${startIsolatedMs.toFixed(0)} ms, bare tsx process ${median(bare).toFixed(0)} ms`,
  );

  // Each deployment's ranking runs in its own process so they do not share an event loop with the load.
  const clean = await startStack({ isolate: ['ranking'] });
  const plus5 = await startStack({ isolate: ['ranking'], faults: { latencyPercent: 5 } });
  const plus50 = await startStack({ isolate: ['ranking'], faults: { latencyPercent: 50 } });
  const ratios5: number[] = [];
  const ratios50: number[] = [];
  try {
    for (const stack of [clean, plus5, plus50]) await computePerRequest(stack, 100, 99); // warm-up
    for (let round = 0; round < 5; round++) {
      const base = await computePerRequest(clean, 150, round);
      ratios5.push((await computePerRequest(plus5, 150, round)) / base);
      ratios50.push((await computePerRequest(plus50, 150, round)) / base);
    }
  } finally {
    await Promise.all([clean.stop(), plus5.stop(), plus50.stop()]);
  }
  console.log(
    `latency fault: ranking compute per request +5% work -> x${median(ratios5).toFixed(3)}, +50% work -> x${median(ratios50).toFixed(3)} (5 interleaved rounds, medians)`,
  );

  const stack = await startStack();
  const levels: Record<string, { work: number; ndcg: number }> = {};
  try {
    const requests = Array.from({ length: 60 }, (_, i) => ({ ...productionRequest(i, 7), k: 10 }));
    const reference = await Promise.all(
      requests.map(async (r) => ((await post(`${stack.urls.query}/recommend`, r)).items as { id: number }[]).map((item) => item.id)),
    );
    const totalWork = async (): Promise<number> =>
      (await metricTotal(stack.urls.ranking, 'work_units_total')) +
      (await Promise.all(stack.urls.shards.map((u) => metricTotal(u, 'work_units_total')))).reduce((a, b) => a + b);
    for (const header of ['ranking=0', 'ranking=1', 'ranking=2', 'ranking=3', 'ranking=4', 'ranking=5', 'prediction=1', 'prediction=2', 'prediction=3']) {
      const before = await totalWork();
      let ndcg = 0;
      for (const [i, r] of requests.entries()) {
        const items = (await post(`${stack.urls.query}/recommend`, r, { 'x-tandem-levels': header })).items as { id: number }[];
        ndcg += ndcgAtK(
          items.map((item) => item.id),
          reference[i]!,
          10,
        );
      }
      levels[header] = { work: ((await totalWork()) - before) / requests.length, ndcg: ndcg / requests.length };
    }
  } finally {
    await stack.stop();
  }
  const full = levels['ranking=0']!.work;
  console.log('level           work (share of L0)   NDCG@10 vs L0');
  for (const [header, { work, ndcg }] of Object.entries(levels))
    console.log(`${header.padEnd(16)}${(work / full).toFixed(3).padStart(8)}             ${ndcg.toFixed(4)}`);

  const figures = {
    baseline: 'one bare node --import tsx process start (start-up) and a clean ranking on the same requests (the latency fault), in the same run',
    startInProcessMs: Math.round(median(inProcess)),
    startIsolatedMs: Math.round(startIsolatedMs),
    startIsolatedVsBareProcess: Number((startIsolatedMs / median(bare)).toFixed(2)),
    latencyFault5CpuRatio: Number(median(ratios5).toFixed(3)),
    latencyFault50CpuRatio: Number(median(ratios50).toFixed(3)),
    ...Object.fromEntries(Object.entries(levels).map(([header, v]) => [`ndcg_${header.replace('=', '_L')}`, Number(v.ndcg.toFixed(4))])),
  };
  console.log(
    JSON.stringify({
      bench: 'stack',
      figures,
      targets: {
        startIsolatedMs: { value: figures.startIsolatedMs, max: 3000 },
        latencyFault5CpuRatio: { value: figures.latencyFault5CpuRatio, min: 1.02 },
        latencyFault50CpuRatio: { value: figures.latencyFault50CpuRatio, min: 1.3 },
      },
    }),
  );
}
