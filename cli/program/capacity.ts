/** `tandem capacity`: capacity tests. */
import { type Command } from 'commander';
import type * as capacity from '../commands/capacity.js';
import type { Registration } from './registration.js';

export function registerCapacity(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('capacity')
    .description(
      "capacity test: ramp replay to a multiple of the baseline with the lattice's controller live; quality, stability, states and recovery per bucket",
    )
    .requiredOption('--workload <name>', 'workload whose corpus and control deployment are used')
    .requiredOption('--lattice <name>', 'lattice whose states and quality target apply')
    .option('--peak <multiple>', 'top of the ramp as a multiple of the baseline (default 2)')
    .option('--baseline <req/s>', 'the 1x rate (default replay.rate)')
    .option('--lead <duration>', 'time at the baseline first (default 1m)')
    .option('--ramp <duration>', 'ramp duration (default 5m)')
    .option('--hold <duration>', 'time at the peak (default 5m)')
    .option('--cooldown <duration>', 'time back at the baseline (default 5m)')
    .option('--bucket <duration>', 'timeline resolution (default 1m)')
    .option('--controller <url>', 'the lattice controller the services coordinate with (omit for an uncoordinated run)')
    .option('--url <url>', 'the deployment under test (default: the workload control URL)')
    .option('--html <file>', 'also write the HTML report (traffic, load-factor and state on one time axis)')
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/capacity.js')).run(command.optsWithGlobals<capacity.CapacityOptions>(), ctx)),
    );
}
