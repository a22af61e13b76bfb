/** `tandem calibrate`: A/A calibration. */
import { type Command } from 'commander';
import type * as calibrate from '../commands/calibrate.js';
import type { Registration } from './registration.js';

export function registerCalibrate(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('calibrate')
    .description('A/A calibration: control against control; reports noise floor, slot bias and false-positive rate per metric')
    .requiredOption('--workload <name>', 'workload from the config')
    .option('--control <url>', 'a running control deployment (used for both arms)')
    .option('--control-revision <rev>', 'substituted for {revision} in the control deploy command')
    .option('--trials <n>', 'A/A trials (default: 3 x trials.count, at least 10)')
    .option('--subsets <n>', 'sequential A/A experiments simulated from the run to measure the false-positive rate', '1000')
    .option('--seed <n>', 'seed of every random choice')
    .option('--rate <pairs/s>', 'override replay.rate')
    .option('--warmup <duration>', 'override trials.warmup')
    .option('--measure <duration>', 'override trials.measure')
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/calibrate.js')).run(command.optsWithGlobals<calibrate.CalibrateOptions>(), ctx)),
    );
}
