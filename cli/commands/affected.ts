/**
 * `tandem affected --base REV --head REV [--json]`: the workloads a change
 * selects, each with why (the shortest path from a changed file to its
 * target, a global input, a config setting its service read), and the ones
 * skipped or deferred with the reason. A base that does not exist is exit 3.
 */
import { createStore } from '../../store/index.js';
import { selectForChange } from '../../triggers/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';

export interface AffectedOptions extends GlobalOptions {
  readonly base: string;
  readonly head?: string;
  readonly repo?: string;
}

export async function run(options: AffectedOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx, true);
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  try {
    const selection = await selectForChange({ config, repo: options.repo ?? ctx.cwd, base: options.base, head: options.head ?? 'HEAD', configReads: store.configReads, nowMs: Date.now() });
    if (options.json) {
      ctx.out(JSON.stringify(selection));
      return ExitCode.ok;
    }
    ctx.out(`${selection.changedFiles.length} changed file(s) between ${selection.base.slice(0, 12)} and ${selection.head.slice(0, 12)}`);
    for (const s of selection.selected) ctx.out(`selected  ${s.workload} (${s.priority}): ${s.reasons.join('; ')}`);
    for (const s of selection.deferred) ctx.out(`deferred  ${s.workload}: ${s.reason}`);
    for (const s of selection.skipped) ctx.out(`skipped   ${s.workload}: ${s.reason}`);
    return ExitCode.ok;
  } finally {
    await store.close();
  }
}
