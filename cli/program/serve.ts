/** `tandem serve`: the web dashboard. */
import { type Command } from 'commander';
import type * as serve from '../commands/serve.js';
import type { Registration } from './registration.js';

export function registerServe(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('serve')
    .description(
      'the web dashboard over the configured store: experiments (live), workloads, capacity and lattice, why a change selected what it did; read-only unless --token-env is given',
    )
    .option('--listen <[host:]port>', 'address to listen on', '127.0.0.1:8700')
    .option('--token-env <VAR>', 'environment variable holding the bearer token that enables cancelling and starting A/A calibrations')
    .option(
      '--allowed-host <name[:port]>',
      'a further name the dashboard answers to (repeatable); requests naming any other Host are refused (421)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/serve.js')).run(command.optsWithGlobals<serve.ServeOptions>(), ctx)),
    );
}
