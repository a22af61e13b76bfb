/** `tandem lattice validate|serve`. */
import { type Command } from 'commander';
import type * as latticeCommand from '../commands/lattice.js';
import type * as latticeValidate from '../commands/lattice-validate.js';
import type { Registration } from './registration.js';

export function registerLattice(program: Command, { ctx, setExit }: Registration): void {
  const latticeGroup = program.command('lattice').description('degradation lattices (HiLO)');
  latticeGroup
    .command('validate')
    .description(
      'run each candidate state as a paired experiment (treatment forced by the test-scenario header) and check capacity/quality monotonicity and targets',
    )
    .requiredOption('--lattice <name>', 'lattice from the config')
    .requiredOption('--workload <name>', 'workload whose control build serves both arms')
    .option('--states <names>', 'comma-separated states (default: all but the first)')
    .option('--control <url>', 'a running control deployment (used for both arms)')
    .option('--trials <n>', 'exactly this many trials (default trials.max)')
    .option('--header <name>', 'test-scenario header (default x-tandem-levels)')
    .option('--base <rev>', "validate the states this change altered (from the base revision; like 'tandem affected')")
    .option('--head <rev>', 'head revision of the change (default HEAD)')
    .option('--repo <dir>', 'git repository of the change (default the working directory)')
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/lattice-validate.js')).validate(command.optsWithGlobals<latticeValidate.ValidateOptions>(), ctx)),
    );
  latticeGroup
    .command('serve')
    .description("run a lattice's controller: services report load-factors and take their levels; every decision is stored")
    .requiredOption('--lattice <name>', 'lattice from the config')
    .option('--listen <[host:]port>', 'address to listen on (default 127.0.0.1:7300)')
    .option('--token-env <VAR>', 'environment variable holding the bearer token for load-factor reports (default TANDEM_CONTROLLER_TOKEN)')
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/lattice.js')).serve(command.optsWithGlobals<latticeCommand.LatticeServeOptions>(), ctx)),
    );
}
