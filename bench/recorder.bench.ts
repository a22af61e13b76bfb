/**
 * `npm run bench -- recorder`:
 * 1. hot path: ns per unsampled request decision (`Recorder.shouldRecord` at
 *    R = 1e-4), against an empty call in the same loop shape;
 * 2. sidecar throughput and p99 with wrk (pinned to core 1; servers on core 0),
 *    3 interleaved rounds: direct to the upstream, through a plain undici
 *    reverse proxy, through `tandem record` at R = 1e-4 and at R = 1.
 *    Targets: recorder at 1e-4 >= 0.9x the plain proxy; at 1 >= 0.7x.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../core/index.js';
import { createLocalStore } from '../store/index.js';
import { Recorder } from '../recorder/index.js';
import { startChild, type BenchChild } from './support/processes.js';
import { ensureWrk, runWrk, type WrkResult } from './support/wrk.js';
import { median } from './support/median.js';

const here = import.meta.dirname;

function hotPathNs(dir: string): { decisionNs: number; emptyCallNs: number } {
  const recorder = new Recorder({ tier: 'bench', store: createLocalStore({ dir }).corpus, clock: systemClock, rate: 1e-4, log: () => undefined });
  const headers = { host: 'svc', accept: 'application/json', 'user-agent': 'bench', 'content-type': 'application/json' };
  const url = '/recommend?surface=home&viewer=7';
  const empty = (_u: string, _h: Record<string, string>): boolean => false;
  const iterations = 5_000_000;
  const time = (fn: (u: string, h: Record<string, string>) => boolean): number => {
    let sampled = 0;
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) if (fn(url, headers)) sampled++;
    const ns = Number(process.hrtime.bigint() - start) / iterations;
    if (sampled > iterations) throw new Error('unreachable'); // keeps the loop observable
    return ns;
  };
  const decide = (u: string, h: Record<string, string>): boolean => recorder.shouldRecord(u, h);
  for (let i = 0; i < 3; i++) {
    time(decide);
    time(empty);
  }
  const decisions: number[] = [];
  const empties: number[] = [];
  for (let round = 0; round < 5; round++) {
    decisions.push(time(decide));
    empties.push(time(empty));
  }
  void recorder.writer.close(0);
  return { decisionNs: median(decisions), emptyCallNs: median(empties) };
}

export async function run(): Promise<void> {
  ensureWrk();
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-recorder-'));
  const children: BenchChild[] = [];
  try {
    const hot = hotPathNs(join(dir, 'hot'));
    console.log(`hot path: ${hot.decisionNs.toFixed(1)} ns per unsampled decision (empty call in the same loop: ${hot.emptyCallNs.toFixed(1)} ns)`);

    const tsx = ['--import', 'tsx'];
    const upstream = await startChild([...tsx, join(here, 'support', 'upstream.ts')], { core: 0 });
    children.push(upstream);
    const upstreamUrl = upstream.info.url as string;
    const plain = await startChild([...tsx, join(here, 'support', 'plain-proxy.ts'), upstreamUrl], { core: 0 });
    children.push(plain);
    const recorders: Record<string, BenchChild> = {};
    for (const [name, rate] of [
      ['recorder_1e-4', '0.0001'],
      ['recorder_1', '1'],
    ] as const) {
      const configDir = join(dir, name);
      await writeFile(join(dir, `${name}.yaml`), `store: { kind: local, dir: ${configDir} }\nrecorder: { bufferRecords: 100000 }\n`);
      const child = await startChild(
        [
          join(here, '..', 'bin', 'tandem.js'),
          '--config',
          join(dir, `${name}.yaml`),
          'record',
          '--tier',
          'bench',
          '--listen',
          ':0',
          '--upstream',
          upstreamUrl,
          '--rate',
          rate,
          '--json',
        ],
        { core: 0 },
      );
      children.push(child);
      recorders[name] = child;
    }
    const targets: Record<string, string> = {
      direct: upstreamUrl,
      plain_proxy: plain.info.url as string,
      'recorder_1e-4': recorders['recorder_1e-4']!.info.url as string,
      recorder_1: recorders.recorder_1!.info.url as string,
    };
    const results: Record<string, WrkResult[]> = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
    for (const url of Object.values(targets)) runWrk(`${url}/warm`, { seconds: 2, connections: 32, core: 1 });
    for (let round = 0; round < 3; round++) {
      for (const [name, url] of Object.entries(targets))
        results[name]!.push(runWrk(`${url}/recommend?surface=home&viewer=${round}`, { seconds: 5, connections: 32, core: 1 }));
    }
    const summary = Object.fromEntries(
      Object.entries(results).map(([name, runs]) => [
        name,
        { rps: median(runs.map((r) => r.requestsPerSecond)), p99Ms: median(runs.map((r) => r.p99Ms)), errors: runs.reduce((a, r) => a + r.errors, 0) },
      ]),
    );
    for (const [name, s] of Object.entries(summary))
      console.log(`${name.padEnd(14)} ${s.rps.toFixed(0).padStart(7)} req/s   p99 ${s.p99Ms.toFixed(2)} ms   errors ${s.errors}`);
    const plainRps = summary.plain_proxy!.rps;
    const figures = {
      baseline: 'an empty call in the same loop shape (hot path); direct calls and a plain undici reverse proxy (throughput), interleaved in the same run',
      hotPathNsPerUnsampled: Number(hot.decisionNs.toFixed(1)),
      hotPathEmptyCallNs: Number(hot.emptyCallNs.toFixed(1)),
      directRps: Math.round(summary.direct!.rps),
      plainProxyRps: Math.round(plainRps),
      recorder1e4Rps: Math.round(summary['recorder_1e-4']!.rps),
      recorder1Rps: Math.round(summary.recorder_1!.rps),
      recorder1e4VsPlainProxy: Number((summary['recorder_1e-4']!.rps / plainRps).toFixed(3)),
      recorder1VsPlainProxy: Number((summary.recorder_1!.rps / plainRps).toFixed(3)),
      plainProxyVsDirect: Number((plainRps / summary.direct!.rps).toFixed(3)),
      directP99Ms: summary.direct!.p99Ms,
      plainProxyP99Ms: summary.plain_proxy!.p99Ms,
      recorder1e4P99Ms: summary['recorder_1e-4']!.p99Ms,
      recorder1P99Ms: summary.recorder_1!.p99Ms,
    };
    console.log(
      JSON.stringify({
        bench: 'recorder',
        figures,
        targets: {
          hotPathNsPerUnsampled: { value: figures.hotPathNsPerUnsampled, max: 100 },
          recorder1e4VsPlainProxy: { value: figures.recorder1e4VsPlainProxy, min: 0.9 },
          recorder1VsPlainProxy: { value: figures.recorder1VsPlainProxy, min: 0.7 },
        },
      }),
    );
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await rm(dir, { recursive: true, force: true });
  }
}
