/** `tandem demo` as a user runs it, in a child process, and the processes it left behind (test/cli/demo*.test.ts). */
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from './cli.js';

/** Processes whose environment carries `marker`: everything the demo started inherits it. */
export async function processesWith(marker: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
    try {
      if ((await readFile(`/proc/${pid}/environ`, 'latin1')).includes(`TANDEM_DEMO_MARKER=${marker}`))
        found.push(`${pid}: ${(await readFile(`/proc/${pid}/cmdline`, 'latin1')).replaceAll('\0', ' ')}`);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** `tandem demo` as a user runs it; `interruptWhen` sends SIGINT once stderr matches it. */
export function demo(
  args: string[],
  cwd: string,
  marker: string,
  interruptWhen?: RegExp,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'tandem.js'), 'demo', ...args], {
      cwd,
      env: { ...process.env, TANDEM_DEMO_MARKER: marker },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let interrupted = false;
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (interruptWhen && !interrupted && interruptWhen.test(err)) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, out, err }));
  });
}
