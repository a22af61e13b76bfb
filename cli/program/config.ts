/** `tandem validate`, `schema` and `store init`: the config and the store it names. */
import { Option, type Command } from 'commander';
import type * as schema from '../commands/schema.js';
import type { Registration } from './registration.js';

export function registerConfig(program: Command, { ctx, setExit, globals }: Registration): void {
  program
    .command('validate')
    .description('check the config; print every problem with its path (exit 3 when invalid)')
    .action(async (_options, command: Command) => setExit(await (await import('../commands/validate.js')).run(globals(command), ctx)));

  program
    .command('schema')
    .description('print the JSON Schema of the config file, for editors')
    .addOption(new Option('--markdown', 'print the Markdown config reference instead'))
    .action(async (options: schema.SchemaOptions) => setExit(await (await import('../commands/schema.js')).run(options, ctx)));

  const store = program.command('store').description('manage the configured store');
  store
    .command('init')
    .description('create the store directories or ClickHouse tables (idempotent)')
    .action(async (_options, command: Command) => setExit(await (await import('../commands/store-init.js')).run(globals(command), ctx)));
}
