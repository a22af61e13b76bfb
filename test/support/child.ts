import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { onTestFinished } from 'vitest';

/** Run a TypeScript file in a child Node process (through tsx), killed when the test ends. */
export function spawnTs(file: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child;
}

/** Resolves when the child prints `line` on stdout; rejects if it exits first or the deadline passes. */
export async function waitForLine(child: ChildProcess, line: string, deadlineMs = 20_000): Promise<void> {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`no "${line}" from child within ${deadlineMs} ms: ${stderr}`)), deadlineMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      if (buffered.split('\n').includes(line)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited with ${code} before "${line}": ${stderr}`));
    });
  });
}

/** Kill with SIGKILL and wait for the exit. */
export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}
