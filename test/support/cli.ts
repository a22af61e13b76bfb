import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { CliContext } from '../../cli/cli-context.js';
import { main } from '../../cli/main.js';

export const REPO_ROOT = join(import.meta.dirname, '..', '..');

/**
 * Run the CLI in-process with captured output. `onOut` sees each line of output as it is written; what it
 * returns is awaited before the result is, and its failure fails the run (an assertion in it is not lost).
 */
export async function runCli(
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; signal?: AbortSignal; onOut?: (text: string) => void | Promise<void> },
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const reactions: Promise<void>[] = [];
  const ctx: CliContext = {
    cwd: options.cwd,
    env: options.env ?? process.env,
    out: (text) => {
      out += text.endsWith('\n') ? text : `${text}\n`;
      if (options.onOut) reactions.push(Promise.resolve().then(() => options.onOut?.(text)));
    },
    err: (text) => (err += text.endsWith('\n') ? text : `${text}\n`),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const code = await main(['node', 'tandem', ...args], ctx);
  await Promise.all(reactions);
  return { code, out, err };
}

/** Run `bin/tandem.js` as a user would, in a child process. */
export function spawnCli(args: readonly string[], options: { cwd: string }): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'tandem.js'), ...args], { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
}
