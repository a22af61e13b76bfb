/** `tandem fuzz`: single-SUT fuzzing. */
import { type Command } from 'commander';
import type * as fuzz from '../commands/fuzz.js';
import type { Registration } from './registration.js';

export function registerFuzz(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('fuzz')
    .description('single-SUT fuzzing: mutated corpus records against one instance; exit 1 on 5xx, crashes, timeouts or property violations')
    .requiredOption('--workload <name>', 'workload whose corpus is mutated')
    .requiredOption('--url <url>', 'the one instance under test')
    .option('--max-requests <n>', 'at most this many requests', '500')
    .option('--duration <duration>', 'at most this long', '60s')
    .option('--seed <n>', 'seed of the mutations', '1')
    .option('--concurrency <n>', 'requests in flight', '8')
    .option('--health-path <path>', 'probed after a dropped connection to tell a crash', '/healthz')
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/fuzz.js')).run(command.optsWithGlobals<fuzz.FuzzCommandOptions>(), ctx)),
    );
}
