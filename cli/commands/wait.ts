/**
 * `tandem wait <id> [--timeout 30m]`: block until the experiment ends; the
 * exit code is its verdict (0 passed or completed, 1 regressed, 2 cancelled,
 * failed or timed out, 4 no verdict, 5 inconclusive).
 */
import { UsageError, systemClock } from '../../core/index.js';
import { createStore } from '../../store/index.js';
import { isTerminal } from '../../executor/index.js';
import { ExitCode, exitCodeForRecord } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { parseTimerDurationFlag } from '../arguments.js';

export interface WaitOptions extends GlobalOptions {
  readonly timeout?: string;
}

export async function run(id: string, options: WaitOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx);
  const timeoutMs = options.timeout !== undefined ? parseTimerDurationFlag(options.timeout, '--timeout') : 3_600_000;
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const record = await store.experiments.get(id);
      if (!record) throw new UsageError(`no experiment ${JSON.stringify(id)} in the store at ${store.location}`);
      if (isTerminal(record.status)) {
        ctx.out(
          options.json
            ? JSON.stringify({ id, status: record.status, ...(record.reason ? { reason: record.reason } : {}), verdict: record.verdict ?? null })
            : `${id}: ${record.status}${record.reason ? ` (${record.reason})` : ''}`,
        );
        return exitCodeForRecord(record);
      }
      if (Date.now() >= deadline) {
        ctx.err(`${id}: still ${record.status} after ${timeoutMs / 1000} s`);
        return ExitCode.failure;
      }
      try {
        await systemClock.sleep(250, ctx.signal);
      } catch {
        return ExitCode.failure;
      }
    }
  } finally {
    await store.close();
  }
}
