/** `tandem demo`. */
import { type Command } from 'commander';
import type * as demo from '../commands/demo.js';
import type { Registration } from './registration.js';

export function registerDemo(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('demo')
    .description('the whole platform on the example stack: record, three experiments, affected workloads, a capacity test; a summary and HTML reports')
    .option('--dir <dir>', 'where the demo writes its config, store and reports (default .tandem/demo)')
    .option('--store <kind>', 'local (default) or clickhouse')
    .option('--clickhouse-url <url>', 'ClickHouse HTTP URL with --store clickhouse (default http://127.0.0.1:8123)')
    .option('--queue <kind>', 'inline (default) or bullmq')
    .option('--redis-url <url>', 'Redis URL with --queue bullmq (default redis://127.0.0.1:6379)')
    .option('--no-worker', 'with --queue bullmq: leave experiments to `tandem worker` processes')
    .option('--rate <pairs/s>', "the judged steps' pairs per second, 1–100, instead of the rate chosen from how idle the machine is and what a request costs")
    .option('--only <steps>', 'run only these steps, e.g. 1,3,5 (the stack starts and the recording runs whichever are chosen)')
    .action(async (_options, command: Command) => setExit(await (await import('../commands/demo.js')).run(command.optsWithGlobals<demo.DemoOptions>(), ctx)));
}
