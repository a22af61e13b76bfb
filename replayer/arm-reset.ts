/**
 * An arm's reset: a command run before every trial (after the arm is
 * deployed, before warm-up), so a stateful service starts each trial from the
 * same state instead of accumulating the writes of earlier trials. The command
 * is a template like a deploy command ({port}, {arm}, {revision}), its values
 * passed through the environment (deploy-command.ts), bounded by a timeout; a
 * reset that fails is an infrastructure failure of the trial (it is replaced),
 * with the command's last output in the reason.
 */
import { spawn } from 'node:child_process';
import type { ArmName } from './schedule.js';
import { deployCommand } from './deploy-command.js';
import { ArmNotReadyError, lastLines } from './arms.js';

export interface ResetSpec {
  readonly command: string;
  readonly timeoutMs: number;
  readonly cwd?: string;
}

export async function resetArm(
  arm: ArmName,
  spec: ResetSpec,
  target: { readonly url: string; readonly revision?: string },
  signal?: AbortSignal,
): Promise<void> {
  const port = Number(new URL(target.url).port) || 80;
  const rendered = deployCommand(spec.command, { port, arm, revision: target.revision ?? '', dependencies: {} });
  const child = spawn('sh', ['-c', rendered.shell], {
    cwd: spec.cwd,
    env: { ...process.env, ...rendered.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4_096);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const kill = (): void => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(kill, spec.timeoutMs);
  signal?.addEventListener('abort', kill, { once: true });
  try {
    const [code, signalName] = (await new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (c, s) => resolve([c, s]));
    })) as [number | null, NodeJS.Signals | null];
    if (code === 0) return;
    const why =
      signalName !== null
        ? `was stopped (${signalName}${signalName === 'SIGKILL' && !signal?.aborted ? `, after its timeout of ${spec.timeoutMs} ms` : ''})`
        : `exited ${code}`;
    throw new ArmNotReadyError(arm, `${arm} reset ${why}: ${rendered.display}${lastLines(output)}`, output);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', kill);
  }
}
