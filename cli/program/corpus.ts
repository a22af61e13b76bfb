/** `tandem corpus ls|show|import|export|prune`: recorded corpora. */
import { type Command } from 'commander';
import type * as corpus from '../commands/corpus.js';
import type { Registration } from './registration.js';

export function registerCorpus(program: Command, { ctx, setExit, globals }: Registration): void {
  const corpusCommand = program.command('corpus').description('list, show, import, export and prune recorded corpora');
  corpusCommand
    .command('ls')
    .description('per tier: records, time range, bytes')
    .action(async (_options, command: Command) => setExit(await (await import('../commands/corpus.js')).ls(globals(command), ctx)));
  corpusCommand
    .command('show <tier>')
    .description('print recorded requests of a tier')
    .option('--since <duration>', 'only this recent (e.g. 4h)')
    .option('--limit <n>', 'at most this many', '10')
    .action(async (tier: string, _options, command: Command) =>
      setExit(await (await import('../commands/corpus.js')).show(tier, command.optsWithGlobals<corpus.ShowOptions>(), ctx)),
    );
  corpusCommand
    .command('import <file>')
    .description('import a HAR or GoReplay (.gor) file; bad entries are reported and skipped')
    .requiredOption('--tier <tier>', 'tier to import into')
    .option('--format <format>', 'har or gor (default: from the file name)')
    .option('--rebase', 'shift times so the newest request is now (old captures fall outside the lookback otherwise)')
    .action(async (file: string, _options, command: Command) =>
      setExit(await (await import('../commands/corpus.js')).importFile(file, command.optsWithGlobals<corpus.ImportOptions>(), ctx)),
    );
  corpusCommand
    .command('export <tier>')
    .description('write a tier as NDJSON (stdout, or --out FILE created mode 0600)')
    .option('--since <duration>', 'only this recent')
    .option('--out <file>', 'write here instead of stdout')
    .action(async (tier: string, _options, command: Command) =>
      setExit(await (await import('../commands/corpus.js')).exportTier(tier, command.optsWithGlobals<corpus.ExportOptions>(), ctx)),
    );
  corpusCommand
    .command('prune')
    .description('delete records older than a duration (default: the longest workload lookback, at least 4h)')
    .option('--tier <tier>', 'only this tier')
    .option('--older-than <duration>', 'e.g. 4h, 7d')
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/corpus.js')).prune(command.optsWithGlobals<corpus.PruneOptions>(), ctx)),
    );
}
