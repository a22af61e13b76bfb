/**
 * `npm run bench -- grpc [--soak-seconds 60]`: Tandem's gRPC path against
 * minimal baselines in the same run. Servers and proxies on core 0, load on
 * core 1, rounds interleaved:
 * - replay: paired replay into two example catalog services against a minimal
 *   paired loop of two @grpc/grpc-js clients (grpcPairsPerSecond, grpcReplayVsMinimal >= 0.8);
 * - router: unary calls/s through the egress router against a minimal node:http2
 *   proxy (grpcRouterVsMinimalProxy >= 0.85, the median of five rounds), and its added p50/p99 at 1,000 calls/s;
 * - recorder: the sidecar at sampling 1e-4 against the same minimal proxy
 *   (grpcRecorderVsPlainProxy >= 0.9, the median of five rounds), and at 0.01 with exact accounting
 *   (grpcRecordAccountingGap 0: sampled − written − dropped − buffered, plus written − stored);
 * - fidelity: every exchange of a set (unary, streams, a trailers-only error,
 *   `-bin` trailers, a reset) seen identically direct, through the sidecar and through the router;
 * - soak: calls through the sidecar (recording every call) for 60 s with stream
 *   resets and GOAWAYs mixed in; a call that should have succeeded and did not
 *   is a failure caused by the recorder (grpcClientFailuresCausedByRecorder 0);
 *   the same mix sent direct, at the same time, is the baseline.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type ClientHttp2Session } from 'node:http2';
import { isDeepStrictEqual } from 'node:util';
import { seededRandom } from '../core/index.js';
import { processStats } from '../replayer/index.js';
import { createLocalStore } from '../store/index.js';
import { startChild, type BenchChild } from './support/processes.js';
import { median } from './support/median.js';
import { exchange, type SeenExchange } from './support/h2-exchange.js';
import { numberFlag } from './support/bench-args.js';

const here = import.meta.dirname;
const tsx = ['--import', 'tsx'];
const support = (file: string): string => join(here, 'support', file);

async function child(file: string, args: string[], core: number, children: BenchChild[]): Promise<BenchChild> {
  const started = await startChild([...tsx, support(file), ...args], { core, timeoutMs: 60_000 });
  children.push(started);
  return started;
}

async function loadRun(file: string, args: string[]): Promise<Record<string, number>> {
  const c = await startChild([...tsx, support(file), ...args], { core: 1, readyKey: 'mode', timeoutMs: 180_000 });
  await c.stop();
  return c.info as Record<string, number>;
}

const fixed = (n: number, digits = 3): number => Number(n.toFixed(digits));

async function replayFigures(children: BenchChild[], rounds: number): Promise<Record<string, number>> {
  const control = await child('grpc-catalog-process.ts', ['v1'], 0, children);
  const treatment = await child('grpc-catalog-process.ts', ['v1'], 0, children);
  const urls = [control.info.url as string, treatment.info.url as string];
  const tandem: number[] = [];
  const minimal: number[] = [];
  for (let round = 0; round < rounds; round++) {
    tandem.push((await loadRun('grpc-replay-load.ts', ['tandem', ...urls, '5'])).pairsPerSecond!);
    minimal.push((await loadRun('grpc-replay-load.ts', ['minimal', ...urls, '5'])).pairsPerSecond!);
    console.log(`replay round ${round + 1}: tandem ${tandem.at(-1)!.toFixed(0)} pairs/s, minimal grpc-js loop ${minimal.at(-1)!.toFixed(0)} pairs/s`);
  }
  await Promise.all([control.stop(), treatment.stop()]);
  return {
    grpcPairsPerSecond: Math.round(median(tandem)),
    minimalPairsPerSecond: Math.round(median(minimal)),
    grpcReplayVsMinimal: fixed(median(tandem) / median(minimal)),
  };
}

async function proxyFigures(children: BenchChild[], rounds: number, dir: string): Promise<Record<string, number>> {
  const upstream = await child('grpc-catalog-process.ts', ['v1'], 0, children);
  const url = upstream.info.url as string;
  const plain = await child('h2-plain-proxy.ts', [url], 0, children);
  const router = await child('grpc-proxy-process.ts', ['router', url], 0, children);
  const sparse = await child('grpc-proxy-process.ts', ['sidecar', url, '0.0001', join(dir, 'sparse')], 0, children);
  const dense = await child('grpc-proxy-process.ts', ['sidecar', url, '0.01', join(dir, 'dense')], 0, children);
  const targets: Record<string, BenchChild> = { plain, router, sidecar1e4: sparse, sidecar1e2: dense };
  const rate: Record<string, number[]> = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
  const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
  for (const target of Object.values(targets)) await loadRun('h2-load.ts', ['throughput', target.info.url as string, '2', '64']);
  for (let round = 0; round < rounds; round++) {
    // Each round starts with the next target: none always runs first, on a freshly idle core.
    const entries = Object.entries(targets);
    for (const [name, target] of [...entries.slice(round % entries.length), ...entries.slice(0, round % entries.length)]) {
      const before = await processStats(target.info.pid as number);
      const result = await loadRun('h2-load.ts', ['throughput', target.info.url as string, '5', '64']);
      const after = await processStats(target.info.pid as number);
      rate[name]!.push(result.callsPerSecond!);
      if (before && after) cpu[name]!.push(((after.cpuSeconds - before.cpuSeconds) * 1e6) / (result.callsPerSecond! * 5));
    }
    console.log(
      `proxies round ${round + 1}: ${Object.entries(rate)
        .map(([name, v]) => `${name} ${v.at(-1)!.toFixed(0)} calls/s`)
        .join(', ')}`,
    );
  }
  const latency = async (target: string) => loadRun('h2-load.ts', ['latency', target, '5', '1000']);
  const direct = await latency(url);
  const routed = await latency(router.info.url as string);
  const proxied = await latency(plain.info.url as string);
  console.log(
    `1,000 calls/s: p50/p99 direct ${direct.p50Ms!.toFixed(3)}/${direct.p99Ms!.toFixed(3)} ms, router ${routed.p50Ms!.toFixed(3)}/${routed.p99Ms!.toFixed(3)} ms, minimal proxy ${proxied.p50Ms!.toFixed(3)}/${proxied.p99Ms!.toFixed(3)} ms`,
  );
  await Promise.all([plain.stop(), router.stop(), sparse.stop(), dense.stop()]);
  // Exact accounting at 0.01: what the sidecar sampled is written, dropped or still buffered, and what it wrote is stored.
  const accounting = JSON.parse(await readFile(join(dir, 'dense', 'accounting.json'), 'utf8')) as {
    sampled: number;
    written: number;
    dropped: number;
    buffered: number;
  };
  const store = createLocalStore({ dir: join(dir, 'dense') });
  let stored = 0;
  for await (const _ of store.corpus.read('bench', { sinceMs: 0 })) stored++;
  await store.close();
  const gap = Math.abs(accounting.sampled - accounting.written - accounting.dropped - accounting.buffered) + Math.abs(accounting.written - stored);
  console.log(
    `sidecar at 0.01: sampled ${accounting.sampled}, written ${accounting.written}, dropped ${accounting.dropped}, buffered ${accounting.buffered}, stored ${stored}`,
  );
  const m = (name: string): number => median(rate[name]!);
  return {
    minimalProxyCallsPerSecond: Math.round(m('plain')),
    routerCallsPerSecond: Math.round(m('router')),
    recorderCallsPerSecondAt1e4: Math.round(m('sidecar1e4')),
    recorderCallsPerSecondAt1e2: Math.round(m('sidecar1e2')),
    grpcRouterVsMinimalProxy: fixed(m('router') / m('plain')),
    grpcRecorderVsPlainProxy: fixed(m('sidecar1e4') / m('plain')),
    grpcRecorderAt001VsPlainProxy: fixed(m('sidecar1e2') / m('plain')),
    minimalProxyCpuUsPerCall: fixed(median(cpu.plain!), 1),
    routerCpuUsPerCall: fixed(median(cpu.router!), 1),
    recorderCpuUsPerCallAt1e4: fixed(median(cpu.sidecar1e4!), 1),
    routerAddedP50Ms: fixed(routed.p50Ms! - direct.p50Ms!),
    routerAddedP99Ms: fixed(routed.p99Ms! - direct.p99Ms!),
    minimalProxyAddedP50Ms: fixed(proxied.p50Ms! - direct.p50Ms!),
    minimalProxyAddedP99Ms: fixed(proxied.p99Ms! - direct.p99Ms!),
    grpcRecordSampled: accounting.sampled,
    grpcRecordAccountingGap: gap,
  };
}

const FIDELITY_CASES = ['ok:plain', 'ok:ünïcode ✓', 'stream:5', 'stream:300', 'fail:missing item', 'reset'];

async function fidelity(children: BenchChild[], dir: string): Promise<Record<string, number>> {
  const upstream = await child('grpc-chaos-upstream.ts', [], 0, children);
  const url = upstream.info.url as string;
  const sidecar = await child('grpc-proxy-process.ts', ['sidecar', url, '1', join(dir, 'fidelity')], 0, children);
  const router = await child('grpc-proxy-process.ts', ['router', url], 0, children);
  const sessions = [url, sidecar.info.url as string, router.info.url as string].map((u) => connect(u));
  for (const s of sessions) s.on('error', () => undefined);
  let identical = 0;
  let total = 0;
  for (const message of FIDELITY_CASES) {
    const [direct, ...proxied] = await Promise.all(sessions.map((s) => exchange(s, '/bench.Echo/Call', message)));
    for (const seen of proxied) {
      total++;
      if (isDeepStrictEqual(seen, direct)) identical++;
      else console.log(`not identical for ${message}:\n  direct  ${JSON.stringify(direct)}\n  proxied ${JSON.stringify(seen)}`);
    }
  }
  for (const s of sessions) s.destroy();
  await Promise.all([upstream.stop(), sidecar.stop(), router.stop()]);
  children.splice(0);
  return { grpcResponseFidelity: fixed(identical / total), fidelityExchanges: total };
}

/** One client's share of the soak: calls of the mix until the deadline, refused ones sent once more on a new connection. */
async function soakClient(url: string, untilMs: number, seed: number): Promise<{ calls: number; failures: number; resets: number; goaways: number }> {
  const random = seededRandom(seed);
  let session: ClientHttp2Session = connect(url);
  session.on('error', () => undefined);
  const fresh = (): ClientHttp2Session => {
    if (session.closed || session.destroyed) {
      session = connect(url);
      session.on('error', () => undefined);
    }
    return session;
  };
  session.on('goaway', () => undefined);
  const counts = { calls: 0, failures: 0, resets: 0, goaways: 0 };
  while (performance.now() < untilMs && counts.calls < 2_000_000) {
    const pick = random();
    const message = pick < 0.02 ? 'reset' : pick < 0.03 ? 'goaway:g' : pick < 0.06 ? 'fail:x' : pick < 0.1 ? 'stream:20' : `ok:${counts.calls}`;
    counts.calls++;
    let seen: SeenExchange = await exchange(fresh(), '/bench.Echo/Call', message);
    if (seen.failed && seen.retryable) {
      session.destroy();
      seen = await exchange(fresh(), '/bench.Echo/Call', message);
    }
    if (message === 'reset') counts.resets++;
    else if (message.startsWith('goaway')) counts.goaways++;
    const expected =
      message === 'reset'
        ? seen.failed
        : message.startsWith('fail')
          ? !seen.failed && seen.headers?.['grpc-status'] === '5'
          : !seen.failed && seen.trailers?.['grpc-status'] === '0';
    if (!expected) counts.failures++;
    if (message.startsWith('goaway')) session.destroy();
  }
  session.destroy();
  return counts;
}

async function soak(children: BenchChild[], dir: string, seconds: number): Promise<Record<string, number>> {
  const upstream = await child('grpc-chaos-upstream.ts', [], 0, children);
  const url = upstream.info.url as string;
  const sidecar = await child('grpc-proxy-process.ts', ['sidecar', url, '1', join(dir, 'soak')], 0, children);
  const until = performance.now() + seconds * 1000;
  const clients = 8;
  const [through, direct] = await Promise.all([
    Promise.all(Array.from({ length: clients }, (_, i) => soakClient(sidecar.info.url as string, until, i + 1))),
    Promise.all(Array.from({ length: clients }, (_, i) => soakClient(url, until, i + 101))),
  ]);
  await Promise.all([sidecar.stop(), upstream.stop()]);
  children.splice(0);
  const sum = (list: typeof through, key: keyof (typeof through)[number]): number => list.reduce((n, c) => n + c[key], 0);
  const accounting = JSON.parse(await readFile(join(dir, 'soak', 'accounting.json'), 'utf8')) as {
    sampled: number;
    written: number;
    dropped: number;
    buffered: number;
  };
  console.log(
    `soak ${seconds} s: through the sidecar ${sum(through, 'calls')} calls (${sum(through, 'resets')} resets, ${sum(through, 'goaways')} GOAWAYs), ${sum(through, 'failures')} failed; direct ${sum(direct, 'calls')} calls, ${sum(direct, 'failures')} failed; recorded ${accounting.written}`,
  );
  return {
    soakSeconds: seconds,
    soakCalls: sum(through, 'calls'),
    soakResets: sum(through, 'resets'),
    soakGoaways: sum(through, 'goaways'),
    grpcClientFailuresCausedByRecorder: sum(through, 'failures'),
    soakDirectFailures: sum(direct, 'failures'),
    soakRecordGap: Math.abs(accounting.sampled - accounting.written - accounting.dropped - accounting.buffered),
  };
}

export async function run(args: string[]): Promise<void> {
  const soakSeconds = numberFlag(args, 'soak-seconds', 60, { min: 5, max: 600 });
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-grpc-'));
  const children: BenchChild[] = [];
  try {
    const replay = await replayFigures(children, 3);
    children.splice(0);
    // Five rounds: each ratio is a median of five interleaved rounds (issue 69).
    const proxies = await proxyFigures(children, 5, dir);
    children.splice(0);
    const fidelityFigures = await fidelity(children, dir);
    const soakFigures = await soak(children, dir, soakSeconds);
    const figures = {
      baseline:
        'a minimal paired loop of two @grpc/grpc-js clients (replay) and a minimal node:http2 proxy (router, recorder), interleaved in the same run; direct calls for latency, fidelity and the soak',
      ...replay,
      ...proxies,
      ...fidelityFigures,
      ...soakFigures,
    };
    console.log(
      JSON.stringify({
        bench: 'grpc',
        figures,
        targets: {
          grpcReplayVsMinimal: { value: replay.grpcReplayVsMinimal, min: 0.8 },
          grpcRouterVsMinimalProxy: { value: proxies.grpcRouterVsMinimalProxy, min: 0.85 },
          grpcRecorderVsPlainProxy: { value: proxies.grpcRecorderVsPlainProxy, min: 0.9 },
          grpcRecordAccountingGap: { value: proxies.grpcRecordAccountingGap, max: 0 },
          grpcClientFailuresCausedByRecorder: { value: soakFigures.grpcClientFailuresCausedByRecorder, max: 0 },
          grpcResponseFidelity: { value: fidelityFigures.grpcResponseFidelity, min: 1 },
        },
      }),
    );
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await rm(dir, { recursive: true, force: true });
  }
}
