/** `tandem affected`: what a change selects and why. */
import { type Command } from 'commander';
import type * as affected from '../commands/affected.js';
import type { Registration } from './registration.js';

export function registerAffected(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('affected')
    .description('the workloads a change selects (build graph, global inputs, config consumption) and why; the rest with the reason')
    .requiredOption('--base <rev>', 'the revision the change starts from')
    .option('--head <rev>', 'the revision of the change (default HEAD)')
    .option('--repo <dir>', 'the git repository (default: the working directory)')
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/affected.js')).run(command.optsWithGlobals<affected.AffectedOptions>(), ctx)),
    );
}
