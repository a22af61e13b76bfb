/**
 * `npm run bench -- router`: the egress router against direct calls, a
 * minimal undici reverse proxy (node:http + Pool.stream()) and Debian's nginx
 * as a reverse proxy (installed by the bench if missing). Upstream and proxies
 * on core 0, load generators on core 1, 3 interleaved rounds:
 * - max throughput with wrk (targets: router >= 0.9x the minimal proxy, >= 0.25x nginx);
 * - CPU seconds per request of each proxy process, from /proc;
 * - added p99 at a fixed 2,000 req/s, open loop from the intended send time (target <= 2 ms).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../core/index.js';
import { processStats } from '../replayer/index.js';
import { pinned, startChild, type BenchChild } from './support/processes.js';
import { ensureWrk, runWrk } from './support/wrk.js';
import { median } from './support/median.js';

const here = import.meta.dirname;
const tsx = ['--import', 'tsx'];

function ensureNginx(): string {
  for (const path of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (spawnSync(path, ['-v']).status === 0) return path;
  process.stderr.write('installing nginx (Debian package) for the benchmark\n');
  const install = spawnSync(
    'sh',
    [
      '-c',
      'apt-get update -q >/dev/null; DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx >/dev/null',
    ],
    { stdio: 'inherit' },
  );
  if (install.status !== 0) throw new Error('nginx is needed: apt-get install -y nginx');
  return '/usr/sbin/nginx';
}

async function startNginx(dir: string, upstream: string): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const binary = ensureNginx();
  const port = await freePort();
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi', 'logs']) await mkdir(join(dir, sub), { recursive: true });
  const config = `worker_processes 1;
master_process off;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  upstream up { server ${new URL(upstream).host}; keepalive 128; }
  server {
    listen 127.0.0.1:${port};
    location / { proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
`;
  await writeFile(join(dir, 'nginx.conf'), config);
  const [command, args] = pinned(0, binary, ['-c', join(dir, 'nginx.conf'), '-p', dir]);
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${url}/item/1`)).ok) break;
    } catch {
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function load(mode: string, args: string[]): Promise<Record<string, number>> {
  const child = await startChild([...tsx, join(here, 'support', 'replay-load.ts'), mode, ...args], { core: 1, readyKey: 'mode', timeoutMs: 120_000 });
  await child.stop();
  return child.info as Record<string, number>;
}

export async function run(): Promise<void> {
  ensureWrk();
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-router-'));
  const children: BenchChild[] = [];
  let nginx: Awaited<ReturnType<typeof startNginx>> | undefined;
  try {
    const upstream = await startChild([...tsx, join(here, 'support', 'upstream.ts')], { core: 0 });
    children.push(upstream);
    const upstreamUrl = upstream.info.url as string;
    const plain = await startChild([...tsx, join(here, 'support', 'plain-proxy.ts'), upstreamUrl], { core: 0 });
    children.push(plain);
    const router = await startChild([...tsx, join(here, 'support', 'router-process.ts'), upstreamUrl], { core: 0 });
    children.push(router);
    nginx = await startNginx(join(dir, 'nginx'), upstreamUrl);
    const targets: Record<string, { url: string; pid?: number }> = {
      direct: { url: upstreamUrl },
      plain_proxy: { url: plain.info.url as string, pid: plain.child.pid! },
      router: { url: router.info.url as string, pid: router.info.pid as number },
      nginx: { url: nginx.url, pid: nginx.pid },
    };
    const rps: Record<string, number[]> = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
    const cpuPerRequest: Record<string, number[]> = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
    for (const { url } of Object.values(targets)) runWrk(`${url}/item/1`, { seconds: 2, connections: 32, core: 1 });
    for (let round = 0; round < 3; round++) {
      for (const [name, { url, pid }] of Object.entries(targets)) {
        const before = pid !== undefined ? await processStats(pid) : undefined;
        const result = runWrk(`${url}/item/${round}`, { seconds: 5, connections: 32, core: 1 });
        const after = pid !== undefined ? await processStats(pid) : undefined;
        rps[name]!.push(result.requestsPerSecond);
        if (before && after) cpuPerRequest[name]!.push(((after.cpuSeconds - before.cpuSeconds) * 1e6) / (result.requestsPerSecond * 5));
      }
      console.log(
        `round ${round + 1}: ${Object.entries(rps)
          .map(([name, values]) => `${name} ${values.at(-1)!.toFixed(0)} req/s`)
          .join(', ')}`,
      );
    }
    // Fresh processes for the latency comparison: after millions of requests at full speed,
    // GC pauses of the first ones would dominate a p99 at 2,000 requests per second.
    await nginx.stop();
    nginx = undefined;
    await Promise.all(children.splice(0).map((c) => c.stop()));
    const freshUpstream = await startChild([...tsx, join(here, 'support', 'upstream.ts')], { core: 0 });
    children.push(freshUpstream);
    const freshRouter = await startChild([...tsx, join(here, 'support', 'router-process.ts'), freshUpstream.info.url as string], { core: 0 });
    children.push(freshRouter);
    const freshPlain = await startChild([...tsx, join(here, 'support', 'plain-proxy.ts'), freshUpstream.info.url as string], { core: 0 });
    children.push(freshPlain);
    const direct: number[] = [];
    const routed: number[] = [];
    const proxied: number[] = [];
    await load('single', [freshRouter.info.url as string, '2', '2000']);
    await load('single', [freshPlain.info.url as string, '2', '2000']);
    for (let round = 0; round < 3; round++) {
      direct.push((await load('single', [freshUpstream.info.url as string, '5', '2000'])).p99Ms!);
      routed.push((await load('single', [freshRouter.info.url as string, '5', '2000'])).p99Ms!);
      proxied.push((await load('single', [freshPlain.info.url as string, '5', '2000'])).p99Ms!);
      console.log(
        `2000 req/s, round ${round + 1}: p99 direct ${direct.at(-1)!.toFixed(3)} ms, through the router ${routed.at(-1)!.toFixed(3)} ms, through the minimal proxy ${proxied.at(-1)!.toFixed(3)} ms`,
      );
    }
    const m = (name: string): number => median(rps[name]!);
    const figures = {
      baseline: 'direct calls, a minimal undici reverse proxy and nginx, interleaved in the same run',
      directRps: Math.round(m('direct')),
      plainProxyRps: Math.round(m('plain_proxy')),
      routerRps: Math.round(m('router')),
      nginxRps: Math.round(m('nginx')),
      routerVsPlainProxy: Number((m('router') / m('plain_proxy')).toFixed(3)),
      routerVsNginx: Number((m('router') / m('nginx')).toFixed(3)),
      plainProxyVsNginx: Number((m('plain_proxy') / m('nginx')).toFixed(3)),
      routerCpuUsPerRequest: Number(median(cpuPerRequest.router!).toFixed(1)),
      plainProxyCpuUsPerRequest: Number(median(cpuPerRequest.plain_proxy!).toFixed(1)),
      nginxCpuUsPerRequest: Number(median(cpuPerRequest.nginx!).toFixed(1)),
      routerCpuVsNginx: Number((median(cpuPerRequest.router!) / median(cpuPerRequest.nginx!)).toFixed(2)),
      directP99At2000Ms: Number(median(direct).toFixed(3)),
      routerP99At2000Ms: Number(median(routed).toFixed(3)),
      addedP99At2000Ms: Number((median(routed) - median(direct)).toFixed(3)),
      minimalProxyP99At2000Ms: Number(median(proxied).toFixed(3)),
      minimalProxyAddedP99At2000Ms: Number((median(proxied) - median(direct)).toFixed(3)),
    };
    console.log(
      JSON.stringify({
        bench: 'router',
        figures,
        targets: {
          routerVsPlainProxy: { value: figures.routerVsPlainProxy, min: 0.9 },
          routerVsNginx: { value: figures.routerVsNginx, min: 0.25 },
          addedP99At2000Ms: { value: figures.addedP99At2000Ms, max: 2 },
        },
      }),
    );
  } finally {
    await nginx?.stop();
    await Promise.all(children.map((c) => c.stop()));
    await rm(dir, { recursive: true, force: true });
  }
}
