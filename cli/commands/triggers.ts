/**
 * `tandem triggers evaluate --since 30d`: FIRE's offline evaluation of the
 * setting-level config refinement over the repository's recent config
 * changes and the consumption index.
 */
import { createStore } from '../../store/index.js';
import { evaluateConfigTriggers } from '../../triggers/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { parseDurationFlag } from '../arguments.js';

export interface EvaluateOptions extends GlobalOptions {
  readonly since?: string;
  readonly repo?: string;
}

export async function evaluate(options: EvaluateOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx);
  const sinceMs = Date.now() - parseDurationFlag(options.since ?? '30d', '--since');
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  try {
    const reads = await store.configReads.latest({ sinceMs: 0 });
    const result = await evaluateConfigTriggers({ repo: options.repo ?? ctx.cwd, sinceMs, reads, recencyMs: config.triggers.configRecency });
    if (options.json) ctx.out(JSON.stringify(result));
    else {
      const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;
      ctx.out(`${result.commits} commit(s) since ${new Date(sinceMs).toISOString()}: ${result.configChanges} change(s) to config files services read`);
      ctx.out(
        `  file level would run ${result.fileLevelSelections} (change, service) pair(s); setting level runs ${result.settingLevelSelections} (${result.fileLevelFallbacks} by fallback to the file)`,
      );
      ctx.out(
        `  suppressed: ${result.suppressed} (${pct(result.suppressedShare)}); of their ${result.suppressedSettings} changed setting(s), ${result.suppressedSettingsReadLater} were read later (${pct(result.readLaterShare)})`,
      );
    }
    return ExitCode.ok;
  } finally {
    await store.close();
  }
}
