/** `tandem collect`: the recorder fed by an edge proxy's mirror. */
import { type Command } from 'commander';
import type * as collect from '../commands/collect.js';
import type { Registration } from './registration.js';

export function registerCollect(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('collect')
    .description('record the sampled copies an edge proxy (nginx mirror, Envoy request mirroring) sends, until Ctrl-C; or print the nginx part')
    .requiredOption(
      '--listen <[host:]port>',
      'where the collector listens (host defaults to 127.0.0.1); with --print-nginx-config, where nginx sends the copies',
    )
    .option('--tier <tier>', 'tier the requests belong to (required unless --print-nginx-config)')
    .option(
      '--rate <share>',
      'share of requests to record, in (0, 1] (default: recorder.rate from the config); nginx samples at least 0.0001, the collector the rest',
    )
    .option('--sticky-header <name>', 'keep or drop whole sessions by hashing this header, at the edge and here')
    .option(
      '--trust <addresses>',
      'comma-separated peer addresses whose copies are recorded (default: 127.0.0.1,::1); with TANDEM_COLLECT_TOKEN set, the token is required instead',
    )
    .option('--admin <[host:]port>', 'where /metrics and /healthz are served (default: a free port)')
    .option('--print-nginx-config', 'print the nginx configuration that mirrors the sample to this collector, and stop')
    .option('--upstream <host:port>', 'with --print-nginx-config: the service nginx passes requests to')
    .option('--edge-listen <[host:]port>', 'with --print-nginx-config: where nginx listens for clients (default 127.0.0.1:8080)')
    .option('--grpc', 'with --print-nginx-config: the service speaks gRPC (nginx listens with HTTP/2 and uses grpc_pass)')
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/collect.js')).run(command.optsWithGlobals<collect.CollectOptions>(), ctx)),
    );
}
