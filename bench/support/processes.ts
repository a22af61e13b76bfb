/** Child processes for benchmarks: started pinned to a core, ready when they print a JSON line, stopped by closing stdin. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface BenchChild {
  readonly info: Record<string, unknown>;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** `taskset -c CORE` when taskset exists, so load generator and servers do not share a core. */
export function pinned(core: number | undefined, command: string, args: readonly string[]): [string, string[]] {
  if (core === undefined || spawnSync('taskset', ['-V']).status !== 0) return [command, [...args]];
  return ['taskset', ['-c', String(core), command, ...args]];
}

/** Start `args` (node arguments) and wait for its first JSON line on stdout. */
export async function startChild(
  args: readonly string[],
  options: { core?: number; env?: NodeJS.ProcessEnv; readyKey?: string; timeoutMs?: number } = {},
): Promise<BenchChild> {
  const [command, argv] = pinned(options.core, process.execPath, args);
  const child = spawn(command, argv, { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...options.env } });
  const info = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? 20_000;
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not answer within ${timeoutMs / 1000} s`)), timeoutMs);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (options.readyKey === undefined || parsed[options.readyKey] !== undefined) {
        clearTimeout(timer);
        resolve(parsed);
      }
    });
  });
  return {
    info,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        child.once('exit', () => {
          clearTimeout(killer);
          resolve();
        });
        child.kill('SIGINT');
        child.stdin?.end();
      }),
  };
}
