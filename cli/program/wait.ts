/** `tandem wait`. */
import { type Command } from 'commander';
import type * as wait from '../commands/wait.js';
import type { Registration } from './registration.js';

export function registerWait(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('wait')
    .description('wait for an experiment to end; exit 0 passed, 1 regressed, 2 cancelled/failed/timeout, 4 no verdict, 5 inconclusive')
    .argument('<experiment>', 'experiment id')
    .option('--timeout <duration>', 'give up after this long (default 1h)')
    .action(async (id: string, _options, command: Command) =>
      setExit(await (await import('../commands/wait.js')).run(id, command.optsWithGlobals<wait.WaitOptions>(), ctx)),
    );
}
