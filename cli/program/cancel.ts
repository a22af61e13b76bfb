/** `tandem cancel`. */
import { type Command } from 'commander';
import type * as cancel from '../commands/cancel.js';
import type { Registration } from './registration.js';

export function registerCancel(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('cancel')
    .description('cancel an experiment: removed when queued, stopped within a second when running')
    .argument('<experiment>', 'experiment id')
    .option('--reason <text>', 'recorded with the cancellation')
    .action(async (id: string, _options, command: Command) =>
      setExit(await (await import('../commands/cancel.js')).run(id, command.optsWithGlobals<cancel.CancelOptions>(), ctx)),
    );
}
