/**
 * `npm run bench -- recorder-h2`: what a hostile client can do to production through the recording sidecar's
 * HTTP/2 side, each against a baseline measured in the same run. Upstream and sidecar on core 0, load on core 1.
 * - sampledStallMs: the worst latency of small calls on one connection while 10 sampled answers of 40,000 gzip
 *   messages pass on another, less the small calls' median before them (≤ 20); beside it the same through a sidecar
 *   that samples nothing (unsampledStallMs) and straight to the upstream (sampledStallMsDirect);
 * - rapidResetWorstLatencyRatio: a legitimate call's worst latency through the sidecar during a rapid reset of
 *   4 × 2,500 streams, over its worst with the same flood sent straight to the upstream, each the median of three
 *   interleaved rounds (`--rounds`) after one unmeasured round each (≤ 2);
 * - upstreamStreamsPerResetStream: the streams the upstream was opened during the sidecar's flood, per flood stream (≤ 0.1);
 * - sidecarRssMbUnderFlood: the sidecar's largest resident memory during its flood (reported);
 * - guards, so that refusing or not recording cannot meet the targets: legitimateCallFailures (every timed call
 *   answered 200 with grpc-status 0) and stallCallsRecordedMissing (the sampling sidecar recorded every call), both 0.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type ClientHttp2Session } from 'node:http2';
import { startChild, type BenchChild } from './support/processes.js';
import { median } from './support/median.js';
import { numberFlag } from './support/bench-args.js';

const here = import.meta.dirname;
const tsx = ['--import', 'tsx'];
const support = (file: string): string => join(here, 'support', file);
const fixed = (n: number, digits = 2): number => Number(n.toFixed(digits));
/** No loop of this bench runs longer, or sends more calls. */
const LOOP_LIMIT = { ms: 120_000, calls: 200_000 };

function session(url: string): ClientHttp2Session {
  const s = connect(url);
  s.on('error', () => undefined);
  return s;
}

/** Legitimate calls that did not end with status 200 and grpc-status 0: a proxy that refused them would look fast. */
let failedCalls = 0;

/** One gRPC-framed POST on `s`, resolved with its latency in ms once its response has ended (or failed, counted). */
function timedCall(s: ClientHttp2Session, path: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    const stream = s.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
    let ok = false;
    stream.on('error', () => undefined);
    stream.once('response', (headers) => (ok = headers[':status'] === 200));
    stream.once('trailers', (trailers) => (ok &&= trailers['grpc-status'] === '0'));
    stream.end(Buffer.from([0, 0, 0, 0, 1, 0x61]));
    stream.resume();
    stream.once('close', () => {
      if (!ok || !stream.readableEnded) failedCalls++;
      resolve(performance.now() - started);
    });
  });
}

/** Small calls one after another on their own connection until `until` settles; their latencies. */
async function callsUntil(url: string, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true));
  const s = session(url);
  const latencies: number[] = [];
  const started = performance.now();
  while (!done && latencies.length < LOOP_LIMIT.calls && performance.now() - started < LOOP_LIMIT.ms) latencies.push(await timedCall(s, '/bench.Small/Call'));
  s.close();
  return latencies;
}

async function smallCallMedian(url: string, calls: number): Promise<number> {
  const s = session(url);
  const latencies: number[] = [];
  for (let i = 0; i < calls; i++) latencies.push(await timedCall(s, '/bench.Small/Call'));
  s.close();
  return median(latencies);
}

/** The worst added latency of small calls while `bigCalls` sampled big answers pass on another connection. */
async function stall(url: string, bigCalls: number): Promise<{ worstMs: number; medianMs: number; bigMs: number; calls: number }> {
  const medianMs = await smallCallMedian(url, 200);
  const big = session(url);
  const started = performance.now();
  const bigDone = Promise.all(Array.from({ length: bigCalls }, () => timedCall(big, '/bench.Big/Answer')));
  const during = await callsUntil(url, bigDone);
  const bigMs = performance.now() - started;
  big.close();
  return { worstMs: Math.max(...during), medianMs, bigMs, calls: 200 + during.length + bigCalls };
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN) / 1024;
}

async function upstreamStreams(upstreamUrl: string): Promise<number> {
  const s = session(upstreamUrl);
  const body = await new Promise<string>((resolve, reject) => {
    const stream = s.request({ ':path': '/count' });
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
    stream.once('end', () => resolve(text));
    stream.once('error', reject);
  });
  s.close();
  return (JSON.parse(body) as { streams: number }).streams;
}

/** A flood at `url` from its own process, legitimate calls timed meanwhile, and the sidecar's memory sampled. */
async function flood(
  url: string,
  connections: number,
  streams: number,
  watchPid?: number,
): Promise<{ worstMs: number; calls: number; peakRssMb: number; streamsSent: number }> {
  let peakRssMb = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling && watchPid !== undefined) {
      peakRssMb = Math.max(peakRssMb, await rssMb(watchPid));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const port = new URL(url).port;
  const flooding = startChild([...tsx, support('h2-flood-process.ts'), port, String(connections), String(streams)], {
    core: 1,
    readyKey: 'streamsSent',
    timeoutMs: LOOP_LIMIT.ms,
  });
  const latencies = await callsUntil(url, flooding);
  const done = await flooding;
  await done.stop();
  sampling = false;
  await sampler;
  return { worstMs: Math.max(...latencies), calls: latencies.length, peakRssMb, streamsSent: done.info.streamsSent as number };
}

export async function run(args: string[]): Promise<void> {
  const connections = numberFlag(args, 'connections', 4, { min: 1, max: 16, integer: true });
  const streams = numberFlag(args, 'streams', 2_500, { min: 100, max: 10_000, integer: true });
  const rounds = numberFlag(args, 'rounds', 3, { min: 1, max: 9, integer: true });
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-recorder-h2-'));
  const children: BenchChild[] = [];
  try {
    const upstream = await startChild([...tsx, support('h2-gzip-upstream.ts')], { core: 0 });
    children.push(upstream);
    const upstreamUrl = upstream.info.url as string;
    const sidecar = await startChild([...tsx, support('grpc-proxy-process.ts'), 'sidecar', upstreamUrl, '1', join(dir, 'sidecar')], { core: 0 });
    children.push(sidecar);
    // For the stall, sidecars that have not been flooded: one sampling every call, one sampling (next to) nothing,
    // what forwarding the big answers costs without recording them.
    const sampling = await startChild([...tsx, support('grpc-proxy-process.ts'), 'sidecar', upstreamUrl, '1', join(dir, 'sampling')], { core: 0 });
    children.push(sampling);
    const plain = await startChild([...tsx, support('grpc-proxy-process.ts'), 'sidecar', upstreamUrl, '0.000001', join(dir, 'plain')], { core: 0 });
    children.push(plain);
    const sidecarUrl = sidecar.info.url as string;
    const sidecarPid = sidecar.info.pid as number;
    console.log(`upstream ${upstreamUrl} (big answer ${upstream.info.bigBytes} bytes), sidecar ${sidecarUrl} sampling every call`);

    // The flood first, on a fresh sidecar (its paths and its record worker warmed by 200 calls, as the upstream's):
    // straight at the upstream (the baseline), then through the sidecar.
    await smallCallMedian(upstreamUrl, 200);
    await smallCallMedian(sidecarUrl, 200);
    // Rounds interleaved, each the median's: one call's worst latency is the noisiest figure there is.
    const directWorst: number[] = [];
    const throughWorst: number[] = [];
    let reached = 0;
    let sent = 0;
    let peakRssMb = 0;
    const rssBeforeMb = await rssMb(sidecarPid);
    // One flood each first, not measured: the first rapid reset a process sees also compiles its paths for it.
    await flood(upstreamUrl, connections, streams);
    await flood(sidecarUrl, connections, streams, sidecarPid);
    for (let round = 0; round < rounds; round++) {
      const floodDirect = await flood(upstreamUrl, connections, streams);
      const before = await upstreamStreams(upstreamUrl);
      const floodThrough = await flood(sidecarUrl, connections, streams, sidecarPid);
      // The legitimate calls made during the sidecar's flood reached the upstream too: not the flood's.
      const reachedNow = Math.max(0, (await upstreamStreams(upstreamUrl)) - before - floodThrough.calls);
      directWorst.push(floodDirect.worstMs);
      throughWorst.push(floodThrough.worstMs);
      reached += reachedNow;
      sent += floodThrough.streamsSent;
      peakRssMb = Math.max(peakRssMb, floodThrough.peakRssMb);
      console.log(
        `rapid reset ${connections} × ${streams}, round ${round + 1}: direct worst call ${floodDirect.worstMs.toFixed(1)} ms (${floodDirect.calls} calls); through the sidecar worst ${floodThrough.worstMs.toFixed(1)} ms (${floodThrough.calls} calls), ${reachedNow} flood streams reached the upstream, sidecar RSS peak ${floodThrough.peakRssMb.toFixed(0)} MB (${rssBeforeMb.toFixed(0)} before the first)`,
      );
    }

    // The stall: direct first (the upstream's own), then through a sidecar sampling none, then one sampling all.
    await smallCallMedian(sidecarUrl, 200);
    const direct = await stall(upstreamUrl, 10);
    await smallCallMedian(plain.info.url as string, 200);
    const unsampled = await stall(plain.info.url as string, 10);
    await smallCallMedian(sampling.info.url as string, 200);
    const through = await stall(sampling.info.url as string, 10);
    const line = (name: string, r: Awaited<ReturnType<typeof stall>>): string =>
      `${name} worst ${r.worstMs.toFixed(1)} ms (median before ${r.medianMs.toFixed(2)} ms, big calls ${r.bigMs.toFixed(0)} ms)`;
    console.log(
      `small calls while 10 big answers pass: ${line('direct', direct)}; ${line('through the sidecar sampling none', unsampled)}; ${line('sampling every call', through)}`,
    );

    // The sampling sidecar recorded every call it passed (a sidecar that records nothing would not stall either).
    await sampling.stop();
    const accounting = JSON.parse(await readFile(join(dir, 'sampling', 'accounting.json'), 'utf8')) as { written: number };
    const stallCallsRecordedMissing = Math.max(0, 200 + through.calls - accounting.written);
    const figures = {
      sampledStallMs: fixed(Math.max(0, through.worstMs - through.medianMs)),
      sampledStallMsDirect: fixed(Math.max(0, direct.worstMs - direct.medianMs)),
      unsampledStallMs: fixed(Math.max(0, unsampled.worstMs - unsampled.medianMs)),
      rapidResetWorstLatencyRatio: fixed(median(throughWorst) / median(directWorst)),
      rapidResetWorstMsDirect: fixed(median(directWorst)),
      rapidResetWorstMsSidecar: fixed(median(throughWorst)),
      upstreamStreamsPerResetStream: fixed(reached / sent, 4),
      sidecarRssMbUnderFlood: fixed(peakRssMb, 1),
      sidecarRssMbBeforeFlood: fixed(rssBeforeMb, 1),
      stallCallsRecordedMissing,
      legitimateCallFailures: failedCalls,
    };
    const targets = {
      sampledStallMs: { value: figures.sampledStallMs, max: 20 },
      rapidResetWorstLatencyRatio: { value: figures.rapidResetWorstLatencyRatio, max: 2 },
      upstreamStreamsPerResetStream: { value: figures.upstreamStreamsPerResetStream, max: 0.1 },
      stallCallsRecordedMissing: { value: stallCallsRecordedMissing, max: 0 },
      legitimateCallFailures: { value: failedCalls, max: 0 },
    };
    console.log(JSON.stringify({ bench: 'recorder-h2', figures, targets }));
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await rm(dir, { recursive: true, force: true });
  }
}
