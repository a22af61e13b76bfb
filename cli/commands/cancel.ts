/**
 * `tandem cancel <id>`: a queued experiment is removed; a running one is told
 * through the queue (Redis pub/sub for BullMQ) and the store, and stops
 * within a second.
 */
import { UsageError } from '../../core/index.js';
import { createStore } from '../../store/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { queueFor } from '../experiment-options.js';

export interface CancelOptions extends GlobalOptions {
  readonly reason?: string;
}

export async function run(id: string, options: CancelOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx);
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  const queue = await queueFor(config, store, ctx.cwd);
  try {
    const result = await queue.cancel(id, options.reason ?? `cancelled by ${process.env.USER ?? 'a user'}`);
    if (result === 'unknown') throw new UsageError(`no experiment ${JSON.stringify(id)} in the store at ${store.location}`);
    ctx.out(options.json ? JSON.stringify({ id, result }) : result === 'removed' ? `${id}: removed from the queue` : result === 'signalled' ? `${id}: cancel sent to its worker` : result === 'orphan-cancelled' ? `${id}: cancelled (its runner had died; nothing was running it)` : `${id}: had already finished`);
    return ExitCode.ok;
  } finally {
    await queue.close();
    await store.close();
  }
}
