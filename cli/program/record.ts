/** `tandem record`: the recording sidecar. */
import { type Command } from 'commander';
import type * as record from '../commands/record.js';
import type { Registration } from './registration.js';

export function registerRecord(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('record')
    .description('record production requests through a sampling reverse proxy (sidecar) until Ctrl-C')
    .requiredOption('--tier <tier>', 'tier the requests belong to')
    .requiredOption('--listen <[host:]port>', 'where the sidecar listens (host defaults to 127.0.0.1)')
    .requiredOption('--upstream <url>', 'the service to forward to; a path in it prefixes every forwarded path (the corpus keeps the path clients sent)')
    .option('--rate <share>', 'share of requests to record, in (0, 1] (default: recorder.rate from the config)')
    .option('--sticky-header <name>', 'keep or drop whole sessions by hashing this header')
    .option('--sticky-query <name>', 'keep or drop whole sessions by hashing this query parameter')
    .option('--tls-cert <file>', 'serve TLS with this PEM certificate (chain); clients choose HTTP/2 (gRPC) or HTTP/1.1 by ALPN')
    .option('--tls-key <file>', 'the PEM private key of --tls-cert')
    .option('--admin <[host:]port>', 'where /metrics and /healthz are served (default: a free port)')
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/record.js')).run(command.optsWithGlobals<record.RecordOptions>(), ctx)),
    );
}
