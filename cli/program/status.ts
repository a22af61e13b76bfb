/** `tandem status`: the newest experiments, or one. */
import { type Command } from 'commander';
import type * as status from '../commands/status.js';
import type { Registration } from './registration.js';

export function registerStatus(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('status')
    .description('the newest experiments, or one with its trials, verdict and events')
    .argument('[experiment]', 'experiment id')
    .option('--workload <name>', 'only this workload')
    .option('--limit <n>', 'how many (default 20)')
    .action(async (id: string | undefined, _options, command: Command) =>
      setExit(await (await import('../commands/status.js')).run(id, command.optsWithGlobals<status.StatusOptions>(), ctx)),
    );
}
