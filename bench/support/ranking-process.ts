/**
 * A fresh example ranking process for the noise studies (cpu-settling, paired-noise): started as a trial
 * deploys an arm, sent recorded /rank bodies, its CPU time read from /proc (nanosecond schedstat) for the
 * main thread and for every thread.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readdirSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { UsageError } from '../../core/errors.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'tandem.js');

/** CPU nanoseconds of the process's main thread and of all its threads. */
export function cpuNs(pid: number): { main: number; all: number } {
  const of = (path: string): number => Number(readFileSync(path, 'utf8').split(' ')[0]);
  let all = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      all += of(`/proc/${pid}/task/${task}/schedstat`);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return { main: of(`/proc/${pid}/task/${pid}/schedstat`), all };
}

/** Minor page faults of the process so far, all its threads (/proc/<pid>/stat, field 10). */
export function minorFaults(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which may hold spaces and parentheses: state is the first, minflt the eighth.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
}

/** Resident set of the process in bytes (/proc/<pid>/statm, second field, in pages of 4 KiB as on x86_64 and arm64). */
export function rssBytes(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * 4096;
}

/**
 * POST a body; resolves true when a 2xx answer has been read, false when the request failed or timed out (5 s)
 * or the answer was not 2xx: CPU per request counts answered requests only, so a failure must not count as one.
 */
export function post(url: URL, body: Buffer, agent?: Agent): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length }, timeout: 5_000, ...(agent ? { agent } : {}) },
      (res) => {
        res.resume();
        const ok = res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300;
        res.on('end', () => resolve(ok));
        res.on('error', () => resolve(false));
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end(body);
  });
}

export interface RankingProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Its /rank address on 127.0.0.1. */
  readonly url: URL;
  stop(): Promise<void>;
}

/** Processes started here and not yet exited: a bench stopped by Ctrl-C or SIGTERM takes them with it. */
const running = new Set<ChildProcess>();
let stopsOnSignal = false;

function stopRunningOnSignal(): void {
  if (stopsOnSignal) return;
  stopsOnSignal = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const child of running) child.kill('SIGKILL');
      // The handler ran once and is gone: the signal's default action now ends the bench as it would have.
      process.kill(process.pid, signal);
    });
  }
}

/**
 * The niceness the kernel gave `pid` (field 19 of /proc/<pid>/stat) must be `nice`: coreutils' nice only warns when
 * it may not raise a priority (that needs root or CAP_SYS_NICE) and runs the command anyway, which would measure
 * the default priority under the other one's name.
 */
async function expectNice(pid: number, nice: number, stop: () => Promise<void>): Promise<void> {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const actual = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  if (actual === nice) return;
  await stop();
  throw new UsageError(`a ranking process asked to run at niceness ${nice} runs at ${actual} (a negative niceness needs root or CAP_SYS_NICE)`);
}

/** Start `tandem example-stack --service ranking` on a free port; resolves once it printed its address. */
export async function startRankingProcess(
  env: NodeJS.ProcessEnv,
  nodeArgs: readonly string[] = [],
  options: { fixedLayout?: boolean; cpus?: string; nice?: number } = {},
): Promise<RankingProcess> {
  let argv = [process.execPath, ...nodeArgs, BIN, 'example-stack', '--service', 'ranking', '--port', '0', '--json'];
  // setarch -R: the kernel's address-space randomization off for this process (personality ADDR_NO_RANDOMIZE).
  if (options.fixedLayout) argv = ['setarch', '-R', ...argv];
  // taskset -c: the process (and its threads) only on these CPUs.
  if (options.cpus !== undefined) argv = ['taskset', '-c', options.cpus, ...argv];
  // nice -n, outermost: set before node starts any thread, so every thread of the process has it (Linux's nice is per thread).
  if (options.nice !== undefined) argv = ['nice', '-n', String(options.nice), ...argv];
  stopRunningOnSignal();
  const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'inherit'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'close');
  };
  // Bounded: a process that never prints its address is killed.
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  try {
    for await (const line of createInterface({ input: child.stdout! })) {
      const urls = (JSON.parse(line) as { urls?: string[] }).urls;
      if (!urls?.[0]) continue;
      if (options.nice !== undefined) await expectNice(child.pid!, options.nice, stop);
      return { child, pid: child.pid!, url: new URL('/rank', urls[0]), stop };
    }
  } finally {
    clearTimeout(killer);
  }
  await stop();
  throw new Error('ranking printed no address');
}
