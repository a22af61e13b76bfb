/**
 * `tandem worker [--concurrency N]`: process experiments from the BullMQ
 * queue until SIGINT/SIGTERM (running experiments finish first; a second
 * signal leaves at once and another worker resumes them). Workloads with
 * `calibration.every` get their periodic A/A scheduled.
 */
import { UsageError, systemClock } from '../../core/index.js';
import { createStore } from '../../store/index.js';
import { BullMqQueue, BullMqWorker } from '../../executor/bullmq-queue.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { parsePositiveInteger } from '../arguments.js';
import { runnerFor, workloadLimits } from '../experiment-options.js';

export interface WorkerOptions extends GlobalOptions {
  readonly concurrency?: string;
}

export async function run(options: WorkerOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx);
  if (config.queue.kind !== 'bullmq')
    throw new UsageError('`tandem worker` serves a BullMQ queue: set queue.kind: bullmq (the inline queue runs experiments with `tandem run`)');
  const concurrency = options.concurrency !== undefined ? parsePositiveInteger(options.concurrency, '--concurrency') : config.queue.concurrency;
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  await store.init();
  const queue = await BullMqQueue.open({ redisUrl: config.queue.redisUrl, prefix: config.queue.prefix, store, clock: systemClock });
  if (config.queue.globalConcurrency !== undefined) await queue.setGlobalConcurrency(config.queue.globalConcurrency);
  for (const w of config.workloads) if (w.calibration) await queue.scheduleCalibration(w.name, w.calibration.every);
  const worker = new BullMqWorker({
    redisUrl: config.queue.redisUrl,
    prefix: config.queue.prefix,
    store,
    clock: systemClock,
    run: runnerFor(config, store, ctx.cwd),
    concurrency,
    lockDurationMs: config.queue.lockDuration,
    stalledIntervalMs: config.queue.stalledInterval,
    workloadLimits: workloadLimits(config),
    onError: (id, error) => ctx.err(`experiment ${id}: ${(error as Error).message}`),
    onConnectionLost: (message) => ctx.err(`worker: ${message}`),
  });
  await worker.worker.waitUntilReady();
  ctx.out(JSON.stringify({ worker: 'ready', pid: process.pid, concurrency, queue: `${config.queue.prefix}:${'experiments'}` }));
  await new Promise<void>((resolve) => {
    if (ctx.signal?.aborted) resolve();
    ctx.signal?.addEventListener('abort', () => resolve(), { once: true });
  });
  ctx.err('worker stopping: running experiments finish first (signal again to leave now; another worker resumes them)');
  await worker.close();
  await queue.close();
  await store.close();
  return ExitCode.ok;
}
