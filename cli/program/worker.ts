/** `tandem worker`: a BullMQ worker. */
import { type Command } from 'commander';
import type * as worker from '../commands/worker.js';
import type { Registration } from './registration.js';

export function registerWorker(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('worker')
    .description('process experiments from the BullMQ queue until SIGINT/SIGTERM')
    .option('--concurrency <n>', 'experiments this worker runs at once (default: queue.concurrency)')
    .action(async (_options, command: Command) =>
      setExit(await (await import('../commands/worker.js')).run(command.optsWithGlobals<worker.WorkerOptions>(), ctx)),
    );
}
