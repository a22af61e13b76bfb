/** `tandem bisect` and `tandem bisect-step` (for `git bisect run`). */
import { type Command } from 'commander';
import type * as bisect from '../commands/bisect.js';
import type { Registration } from './registration.js';

export function registerBisect(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('bisect')
    .description('find the first bad revision: each step an experiment of the candidate against the good revision')
    .requiredOption('--workload <name>', 'workload whose deploy template takes {revision}')
    .requiredOption('--good <rev>', 'a revision without the regression')
    .option('--bad <rev>', 'a revision with it (default HEAD)')
    .option('--metric <name>', 'the regressed metric to chase (default: the experiment verdict)')
    .option('--repo <dir>', 'the git repository (default: the working directory)')
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/bisect.js')).run(command.optsWithGlobals<bisect.BisectOptions>(), ctx)),
    );

  program
    .command('bisect-step')
    .description('judge the checked-out revision for `git bisect run` (exit 0 good, 1 bad, 125 skip)')
    .requiredOption('--workload <name>', 'workload whose deploy template takes {revision}')
    .requiredOption('--good <rev>', 'a revision without the regression')
    .option('--metric <name>', 'the regressed metric to chase')
    .option('--repo <dir>', 'the git repository (default: the working directory)')
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/bisect.js')).step(command.optsWithGlobals<bisect.BisectOptions>(), ctx)),
    );
}
