/** `tandem ingest`: the config-consumption index over HTTP. */
import { type Command } from 'commander';
import type * as ingest from '../commands/ingest.js';
import type { Registration } from './registration.js';

export function registerIngest(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('ingest')
    .description('HTTP ingest of the config consumption index (POST /config-reads) until Ctrl-C')
    .option('--listen <[host:]port>', 'address to listen on (default 127.0.0.1:7400)')
    .option('--token-env <VAR>', 'environment variable holding the bearer token (default TANDEM_INGEST_TOKEN)')
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/ingest.js')).run(command.optsWithGlobals<ingest.IngestOptions>(), ctx)),
    );
}
