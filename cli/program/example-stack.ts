/** `tandem example-stack`: the example serving stack, or one of its services for deploy commands. */
import { type Command } from 'commander';
import type * as exampleStack from '../commands/example-stack.js';
import type { Registration } from './registration.js';

export function registerExampleStack(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('example-stack')
    .description('start the example serving stack (query, ranking, features, gateway, prediction shards) until Ctrl-C')
    .option('--service <name>', 'run only this service, configured from the environment (for deploy commands)')
    .option('--port <port>', 'with --service: port to listen on (default: any free port)')
    .option('--faults <list>', 'faults of ranking, e.g. "latency=5,malformed-tensor=rank-video,latent-timeout,error-rate=0.02"')
    .option('--shards <n>', 'prediction shards', '4')
    .option('--isolate <services>', 'comma-separated services to run as child processes')
    .option('--traffic <rate>', 'play production traffic at this many requests per second, then stop')
    .option('--duration <duration>', 'with --traffic: for how long', '30s')
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/example-stack.js')).run(command.optsWithGlobals<exampleStack.ExampleStackOptions>(), ctx)),
    );
}
