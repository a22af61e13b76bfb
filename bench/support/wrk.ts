/** wrk (Debian's) as the load generator: closed loop, fixed connections, latency percentiles. */
import { spawnSync } from 'node:child_process';
import { pinned } from './processes.js';

/** Install wrk with apt-get when it is missing (benchmarks only; tests never need it). */
export function ensureWrk(): void {
  if (spawnSync('wrk', ['--version']).error === undefined) return;
  process.stderr.write('installing wrk (Debian package) for the benchmark\n');
  const install = spawnSync('sh', ['-c', 'apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q wrk >/dev/null'], {
    stdio: 'inherit',
  });
  if (install.status !== 0) throw new Error('wrk is needed: apt-get install -y wrk');
}

export interface WrkResult {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
}

function toMs(value: string, unit: string): number {
  const n = Number(value);
  return unit === 'us' ? n / 1000 : unit === 's' ? n * 1000 : unit === 'm' ? n * 60_000 : n;
}

/** Run wrk against `url` (a 127.0.0.1 address) for `seconds`, bounded by wrk itself. */
export function runWrk(url: string, options: { seconds: number; connections: number; threads?: number; core?: number }): WrkResult {
  if (!url.startsWith('http://127.0.0.1:')) throw new Error(`benchmarks only load 127.0.0.1, not ${url}`);
  const [command, args] = pinned(options.core, 'wrk', [
    '-t',
    String(options.threads ?? 1),
    '-c',
    String(options.connections),
    '-d',
    `${options.seconds}s`,
    '--latency',
    url,
  ]);
  const run = spawnSync(command, args, { encoding: 'utf8', timeout: (options.seconds + 30) * 1000 });
  const out = run.stdout ?? '';
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  const p50 = /\s50%\s+([\d.]+)(us|ms|s|m)/.exec(out);
  const p99 = /\s99%\s+([\d.]+)(us|ms|s|m)/.exec(out);
  if (!rps || !p50 || !p99) throw new Error(`could not read wrk's output:\n${out}\n${run.stderr ?? ''}`);
  const errors = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requestsPerSecond: Number(rps[1]),
    p50Ms: toMs(p50[1]!, p50[2]!),
    p99Ms: toMs(p99[1]!, p99[2]!),
    errors: Number(errors?.[1] ?? 0) + (socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0),
  };
}
