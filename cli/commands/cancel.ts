/**
 * `tandem cancel <id>`: a queued experiment is removed; a running one is told
 * through the queue (Redis pub/sub for BullMQ) and the store, and stops
 * within a second.
 */
import { UsageError, systemClock } from '../../core/index.js';
import { silentRunner } from '../../executor/index.js';
import { createStore } from '../../store/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { queueFor } from '../experiment-options.js';

const RESULT_WORDS: Readonly<Record<string, (id: string) => string>> = {
  removed: (id) => `${id}: removed from the queue`,
  signalled: (id) => `${id}: cancel sent to its runner, which is renewing its lease (it stops within a second)`,
  'orphan-cancelled': (id) => `${id}: cancelled (its runner had died; its arms were stopped)`,
  'runner-silent': (id) => `${id}: cancel recorded, but its runner has stopped renewing its lease: run this again once the lease lapses`,
  finished: (id) => `${id}: had already finished`,
};

export interface CancelOptions extends GlobalOptions {
  readonly reason?: string;
}

export async function run(id: string, options: CancelOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx);
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  const queue = await queueFor(config, store, ctx.cwd);
  try {
    const reason = options.reason ?? `cancelled by ${process.env.USER ?? 'a user'}`;
    let result = await queue.cancel(id, reason);
    if (result === 'unknown') throw new UsageError(`no experiment ${JSON.stringify(id)} in the store at ${store.location}`);
    if (result === 'runner-silent') {
      // Its runner stopped renewing (most likely killed): wait for the lease to lapse, then end the run here.
      const silent = await silentRunner(store, id, systemClock);
      if (silent !== undefined) {
        const waitMs = Math.max(0, silent.lapsesAtMs - systemClock.now()) + 1_000;
        ctx.err(
          `${id}: its runner ${silent.holder} has not renewed its lease for ${Math.round(silent.silentForMs / 1000)} s (it is most likely dead); the cancel is recorded, and finishes when the lease lapses at ${new Date(silent.lapsesAtMs).toISOString()} — waiting ${Math.ceil(waitMs / 1000)} s (Ctrl-C stops waiting: then run this again after that time)`,
        );
        try {
          await systemClock.sleep(waitMs, ctx.signal);
        } catch {
          ctx.out(
            options.json
              ? JSON.stringify({ id, result, lapsesAt: new Date(silent.lapsesAtMs).toISOString() })
              : `${id}: not cancelled yet: run tandem cancel ${id} again after ${new Date(silent.lapsesAtMs).toISOString()}`,
          );
          return ExitCode.failure;
        }
      }
      result = await queue.cancel(id, reason);
    }
    ctx.out(options.json ? JSON.stringify({ id, result }) : RESULT_WORDS[result]!(id));
    return ExitCode.ok;
  } finally {
    await queue.close();
    await store.close();
  }
}
