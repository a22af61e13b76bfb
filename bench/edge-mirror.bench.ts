/**
 * `npm run bench -- edge-mirror` (issue 71): what recording through nginx's mirror costs production, against the
 * same nginx without mirroring and against the sidecar, in one run. Servers on core 0, load on core 1; 3 rounds,
 * every target once per round in the same order, median of the rounds. Throughput by wrk; p99 by a client that
 * keeps every request's latency (support/http-latency.ts: wrk's summary over-weights the few requests a stall holds).
 *   edgeMirrorVsNginx              nginx mirroring at 1e-4 to `tandem collect` ÷ the same nginx without (≥ 0.95);
 *   edgeMirrorVsSidecar            the same ÷ `tandem record` at 1e-4 (reported; expected ≥ 2);
 *   collectorDownP99RatioVsNginx   a client's p99 through the mirroring nginx while the collector is dead or stalled
 *                                  ÷ nginx alone, the worse of the two (≤ 1.1);
 *   collectorDownMaxMs             the slowest single request then: the collector's timeout bounds it (≤ 1000; a
 *                                  mirror left at nginx's 60 s defaults holds a connection past the run, and a p99 at
 *                                  1e-4 cannot see so few requests);
 *   collectAccountingGap           copies nginx sent (its log) − written − dropped − buffered at the collector (0).
 * The row `mirror_all` mirrors every request (no sampling at the edge): what a configuration that sampled at the
 * collector instead of at nginx would cost, so that edgeMirrorVsNginx is seen to measure something.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../core/index.js';
import { nginxMirrorConfig, type NginxMirrorOptions } from '../recorder/index.js';
import { startNginx, type RunningNginx } from '../test/support/nginx.js';
import { pinned, startChild, type BenchChild } from './support/processes.js';
import { ensureWrk, runWrk, type WrkResult } from './support/wrk.js';
import { median } from './support/median.js';

const here = import.meta.dirname;
const TANDEM = join(here, '..', 'bin', 'tandem.js');
const SERVER_CORE = 0;
const launch = (command: string, args: readonly string[]): [string, string[]] => pinned(SERVER_CORE, command, args);

/** The printed configuration without its mirror: the same nginx, as production runs it before Tandem. */
const withoutMirror = (config: string): string =>
  config
    .split('\n')
    .filter((line) => !/^\s*mirror(_request_body)? /.test(line))
    .join('\n');

/** Copies nginx passed to the collector, counted from a log of the mirror's subrequests (upstream address set). */
const COUNTED_MIRROR = (logFile: string) => (config: string) =>
  config.replace('        access_log off;\n', `        log_subrequest on;\n        access_log ${logFile} mirror_copies;\n`);

interface LatencyResult {
  readonly requests: number;
  readonly errors: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** Every request's latency through `url` for `seconds`, 32 connections, from core 1. */
function exactLatency(url: string, seconds: number): LatencyResult {
  const [command, args] = pinned(1, process.execPath, ['--import', 'tsx', join(here, 'support', 'http-latency.ts'), url, String(seconds), '32']);
  const run = spawnSync(command, args, { encoding: 'utf8', timeout: (seconds + 30) * 1000 });
  const line = (run.stdout ?? '').trim().split('\n').pop() ?? '';
  if (!line.startsWith('{')) throw new Error(`the latency client printed no result: ${run.stdout}${run.stderr}`);
  return JSON.parse(line) as LatencyResult;
}

async function collectMetric(adminUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  return [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce((sum, m) => sum + Number(m[1]), 0);
}

export async function run(): Promise<void> {
  ensureWrk();
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-edge-'));
  const children: BenchChild[] = [];
  const nginxes: RunningNginx[] = [];
  const held = new Set<Socket>();
  const stalled = createServer((socket) => void held.add(socket.pause()));
  try {
    const upstream = await startChild(['--import', 'tsx', join(here, 'support', 'upstream.ts')], { core: SERVER_CORE });
    children.push(upstream);
    const upstreamAddress = { host: '127.0.0.1', port: Number(new URL(upstream.info.url as string).port) };
    await writeFile(join(dir, 'tandem.yaml'), `store: { kind: local, dir: ${join(dir, 'store')} }\nrecorder: { bufferRecords: 100000 }\n`);

    const collector = async (rate: string): Promise<{ port: number; adminUrl: string }> => {
      const port = await freePort();
      const child = await startChild(
        [TANDEM, '--config', join(dir, 'tandem.yaml'), 'collect', '--tier', `bench-${rate}`, '--listen', `127.0.0.1:${port}`, '--rate', rate, '--json'],
        {
          core: SERVER_CORE,
        },
      );
      children.push(child);
      return { port, adminUrl: child.info.adminUrl as string };
    };
    const edge = async (name: string, collectorPort: number, rate: number, shape: (config: string) => string = (c) => c, extraHttp = ''): Promise<string> => {
      const port = await freePort();
      const options: NginxMirrorOptions = {
        listen: { host: '127.0.0.1', port },
        upstream: upstreamAddress,
        collector: { host: '127.0.0.1', port: collectorPort },
        rate,
      };
      nginxes.push(await startNginx(join(dir, name), shape(nginxMirrorConfig(options)), port, { launch, extraHttp }));
      return `http://127.0.0.1:${port}`;
    };

    const sampled = await collector('0.0001');
    const everything = await collector('1');
    stalled.listen(0, '127.0.0.1');
    await once(stalled, 'listening');
    const stalledPort = (stalled.address() as { port: number }).port;
    const deadPort = await freePort();
    const sidecar = await startChild(
      [
        TANDEM,
        '--config',
        join(dir, 'tandem.yaml'),
        'record',
        '--tier',
        'bench-sidecar',
        '--listen',
        ':0',
        '--upstream',
        upstream.info.url as string,
        '--rate',
        '0.0001',
        '--json',
      ],
      {
        core: SERVER_CORE,
      },
    );
    children.push(sidecar);

    const targets: Record<string, string> = {
      nginx: await edge('nginx', sampled.port, 1e-4, withoutMirror),
      edge_mirror: await edge('edge-mirror', sampled.port, 1e-4),
      sidecar: sidecar.info.url as string,
      mirror_all: await edge('mirror-all', everything.port, 1),
    };
    const down: Record<string, string> = {
      nginx: targets.nginx!,
      collector_dead: await edge('collector-dead', deadPort, 1e-4),
      collector_stalled: await edge('collector-stalled', stalledPort, 1e-4),
    };
    const throughput: Record<string, WrkResult[]> = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
    const latency: Record<string, LatencyResult[]> = Object.fromEntries(Object.keys(down).map((k) => [k, []]));
    for (const url of [...Object.values(targets), ...Object.values(down)]) runWrk(`${url}/warm`, { seconds: 2, connections: 32, core: 1 });
    for (let round = 0; round < 3; round++) {
      for (const [name, url] of Object.entries(targets))
        throughput[name]!.push(runWrk(`${url}/recommend?round=${round}`, { seconds: 5, connections: 32, core: 1 }));
      for (const [name, url] of Object.entries(down)) latency[name]!.push(exactLatency(`${url}/recommend?latency=${round}`, 5));
    }
    const rps = (name: string): number => median(throughput[name]!.map((r) => r.requestsPerSecond));
    const p99 = (name: string): number => median(latency[name]!.map((r) => r.p99Ms));
    for (const name of Object.keys(targets)) console.log(`${name.padEnd(18)} ${rps(name).toFixed(0).padStart(7)} req/s (wrk)`);
    for (const name of Object.keys(down))
      console.log(`${name.padEnd(18)} p99 ${p99(name).toFixed(2)} ms over ${latency[name]!.map((r) => r.requests).join(' / ')} requests`);
    const clientErrors = [...Object.values(throughput).flat(), ...Object.values(latency).flat()].reduce((a, r) => a + r.errors, 0);

    // Accounting: at 1% so that thousands of copies are counted, nginx logging each copy it passed on.
    const counted = await collector('0.01');
    const logFile = join(dir, 'mirror-copies.log');
    const countedEdge = await edge('counted', counted.port, 0.01, COUNTED_MIRROR(logFile), "    log_format mirror_copies '$upstream_addr $upstream_status';");
    runWrk(`${countedEdge}/recommend?counted=1`, { seconds: 5, connections: 32, core: 1 });
    const copies = async (): Promise<number> =>
      (await readFile(logFile, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '' && !line.startsWith('- ')).length;
    const deadline = Date.now() + 15_000;
    let mirrored = await copies();
    let gap = Number.NaN;
    for (;;) {
      const [written, dropped, buffered] = await Promise.all(
        ['recorder_written_total', 'recorder_dropped_total', 'recorder_buffered_records'].map((name) => collectMetric(counted.adminUrl, name)),
      );
      mirrored = await copies();
      gap = mirrored - written! - dropped! - buffered!;
      if ((gap === 0 && buffered === 0) || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    console.log(`accounting: nginx passed ${mirrored} copies to the collector; gap ${gap}`);

    const figures = {
      baseline:
        'the same nginx without the mirror lines (throughput, p99) and `tandem record` at 1e-4, interleaved in the same run; load on core 1, servers on core 0',
      nginxRps: Math.round(rps('nginx')),
      edgeMirrorRps: Math.round(rps('edge_mirror')),
      sidecarRps: Math.round(rps('sidecar')),
      mirrorAllRps: Math.round(rps('mirror_all')),
      edgeMirrorVsNginx: Number((rps('edge_mirror') / rps('nginx')).toFixed(3)),
      edgeMirrorVsSidecar: Number((rps('edge_mirror') / rps('sidecar')).toFixed(3)),
      mirrorAllVsNginx: Number((rps('mirror_all') / rps('nginx')).toFixed(3)),
      nginxP99Ms: p99('nginx'),
      collectorDeadP99Ms: p99('collector_dead'),
      collectorStalledP99Ms: p99('collector_stalled'),
      collectorDownP99RatioVsNginx: Number((Math.max(p99('collector_dead'), p99('collector_stalled')) / p99('nginx')).toFixed(3)),
      collectorDownMaxMs: Math.max(...[...latency.collector_dead!, ...latency.collector_stalled!].map((r) => r.maxMs)),
      clientErrors,
      mirroredCopiesCounted: mirrored,
      collectAccountingGap: gap,
    };
    console.log(
      JSON.stringify({
        bench: 'edge-mirror',
        figures,
        targets: {
          edgeMirrorVsNginx: { value: figures.edgeMirrorVsNginx, min: 0.95 },
          collectorDownP99RatioVsNginx: { value: figures.collectorDownP99RatioVsNginx, max: 1.1 },
          collectorDownMaxMs: { value: figures.collectorDownMaxMs, max: 1000 },
          clientErrors: { value: figures.clientErrors, max: 0 },
          collectAccountingGap: { value: figures.collectAccountingGap, max: 0 },
          mirroredCopiesCounted: { value: figures.mirroredCopiesCounted, min: 100 },
        },
      }),
    );
  } finally {
    for (const socket of held) socket.destroy();
    stalled.close();
    await Promise.all(nginxes.map((n) => n.stop()));
    await Promise.all(children.map((c) => c.stop()));
    await rm(dir, { recursive: true, force: true });
  }
}
