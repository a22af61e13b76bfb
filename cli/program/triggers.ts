/** `tandem triggers evaluate`. */
import { type Command } from 'commander';
import type * as triggersCommand from '../commands/triggers.js';
import type { Registration } from './registration.js';

export function registerTriggers(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('triggers')
    .description('trigger selection tools')
    .command('evaluate')
    .description(
      "replay recent config changes offline: how many the setting-level refinement suppresses, and how many of those settings were read later (FIRE's evaluation)",
    )
    .option('--since <duration>', 'how far back (default 30d)')
    .option('--repo <dir>', 'the git repository (default: the working directory)')
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/triggers.js')).evaluate(command.optsWithGlobals<triggersCommand.EvaluateOptions>(), ctx)),
    );
}
