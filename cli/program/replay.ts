/** `tandem replay`: paired trials with a live progress line. */
import { type Command } from 'commander';
import type * as replay from '../commands/replay.js';
import type { Registration } from './registration.js';

export function registerReplay(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('replay')
    .description("replay the workload's corpus into control and treatment in paired trials, with a live progress line")
    .requiredOption('--workload <name>', 'workload from the config')
    .option('--control <url>', 'a running control deployment (with --treatment)')
    .option('--treatment <url>', 'a running treatment deployment (with --control)')
    .option('--control-revision <rev>', 'substituted for {revision} in the control deploy command')
    .option('--treatment-revision <rev>', 'substituted for {revision} in the treatment deploy command')
    .option('--seed <n>', 'seed of every random choice (default: random, printed)')
    .option('--trials <n>', 'exactly this many trials (default trials.max)')
    .option('--rate <pairs/s>', 'override replay.rate')
    .option('--warmup <duration>', 'override trials.warmup')
    .option('--measure <duration>', 'override trials.measure')
    .option('--control-prime <url>', "a second control deployment, for the response comparison's noise cancellation")
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/replay.js')).run(command.optsWithGlobals<replay.ReplayOptions>(), ctx)),
    );
}
