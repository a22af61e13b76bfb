/**
 * gRPC load for the gRPC benchmark, over node:http2 (lighter than a gRPC
 * client library, so the proxy under test is what saturates): Lookup calls of
 * the example catalog, each its own stream. Bounded in time and in count.
 * `throughput URL SECONDS CONCURRENCY`: closed loop over 4 connections;
 * prints calls/s and failures. `latency URL SECONDS RATE`: open loop at RATE
 * calls/s from the intended send time; prints p50 and p99.
 */
import { connect, type ClientHttp2Session } from 'node:http2';
import protobuf from 'protobufjs';
import { CATALOG_PROTO_FILE } from '../../examples/catalog/catalog-service.js';
import { frameMessage } from '../../net/index.js';

const [mode, url, secondsText, numberText] = process.argv.slice(2);
const seconds = Number(secondsText);
const MAX_CALLS = 5_000_000;
const LookupRequest = protobuf.loadSync(CATALOG_PROTO_FILE).lookupType('tandem.test.LookupRequest');
const bodies = Array.from({ length: 64 }, (_, i) => frameMessage(LookupRequest.encode({ id: `a${i}` }).finish()));
let sessionFailures = 0;
/** A session, replaced when the peer ended it (counted: a proxy that drops connections shows as failures, not a crash). */
function session(): ClientHttp2Session {
  const s = connect(url!);
  s.on('error', (error) => {
    sessionFailures++;
    if (process.env.H2_LOAD_DEBUG) process.stderr.write(`session error: ${error.message}\n`);
  });
  s.on('goaway', (code) => {
    if (process.env.H2_LOAD_DEBUG) process.stderr.write(`goaway ${code}\n`);
  });
  return s;
}
const sessions: ClientHttp2Session[] = Array.from({ length: 4 }, session);
let n = 0;

function call(done: (ok: boolean) => void): void {
  const index = n % sessions.length;
  if (sessions[index]!.closed || sessions[index]!.destroyed) sessions[index] = session();
  const stream = sessions[index]!.request({ ':method': 'POST', ':path': '/tandem.test.Catalog/Lookup', 'content-type': 'application/grpc', te: 'trailers' });
  let status: string | undefined;
  stream.on('trailers', (t) => (status = t['grpc-status'] as string | undefined));
  stream.on('data', () => undefined);
  stream.on('error', () => undefined);
  stream.on('close', () => done(status === '0'));
  stream.end(bodies[n++ % bodies.length]);
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

if (mode === 'throughput') {
  const concurrency = Number(numberText);
  const end = performance.now() + seconds * 1000;
  let ok = 0;
  let failed = 0;
  await new Promise<void>((resolve) => {
    let running = concurrency;
    const loop = (): void => {
      if (performance.now() >= end || ok + failed >= MAX_CALLS) {
        if (--running === 0) resolve();
        return;
      }
      call((good) => {
        if (good) ok++;
        else failed++;
        loop();
      });
    };
    for (let i = 0; i < concurrency; i++) loop();
  });
  process.stdout.write(`${JSON.stringify({ mode, callsPerSecond: ok / seconds, failures: failed, sessionFailures })}\n`);
} else {
  const rate = Number(numberText);
  const total = Math.min(MAX_CALLS, Math.floor(rate * seconds));
  const start = performance.now();
  const latencies: number[] = [];
  let failures = 0;
  await new Promise<void>((resolve) => {
    let finished = 0;
    let sent = 0;
    const tick = (): void => {
      const now = performance.now();
      while (sent < total && start + (sent * 1000) / rate <= now) {
        const intended = start + (sent * 1000) / rate;
        sent++;
        call((good) => {
          if (good) latencies.push(performance.now() - intended);
          else failures++;
          if (++finished === total) resolve();
        });
      }
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  latencies.sort((a, b) => a - b);
  process.stdout.write(`${JSON.stringify({ mode, p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99), failures })}\n`);
}
for (const s of sessions) s.destroy();
process.exit(0);
