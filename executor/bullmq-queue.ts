/**
 * Experiments distributed through Redis with BullMQ. The job id is the
 * experiment id (so a duplicate submission adds nothing), the priority comes
 * from the lifecycle stage, a global concurrency limit is BullMQ's own, and a
 * per-workload limit is a Redis semaphore (workload-slots.ts). A worker killed
 * mid-experiment stops renewing its job lock; BullMQ's stalled check hands the
 * job to another worker, which resumes the experiment from the store.
 * Cancellation is published on Redis and reaches the running worker at once.
 */
import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { ExperimentCancelledError, type Clock } from '../core/index.js';
import type { Store } from '../store/index.js';
import { STAGE_PRIORITY, experimentIdFor, parseRequest, type ExperimentRequest } from './experiment-request.js';
import { attemptIdFor, createQueued, isTerminal, transition } from './lifecycle.js';
import { requestCancel, watchCancellation } from './cancellation-watch.js';
import type { CancelResult, ExperimentQueue, ExperimentRunner, SubmitOptions, SubmitResult } from './queue.js';
import { WorkloadSlots } from './workload-slots.js';
import { assertRedisReachable, redisConnection } from './redis-connection.js';

export const QUEUE_NAME = 'experiments';

export interface BullMqOptions {
  readonly redisUrl: string;
  readonly prefix: string;
  readonly store: Store;
  readonly clock: Clock;
}

/** Job data: a stored experiment, or (periodic schedules) a request to store first. */
interface JobData {
  readonly id?: string;
  readonly request?: unknown;
}

const cancelChannel = (prefix: string): string => `${prefix}:tandem:cancel`;

export class BullMqQueue implements ExperimentQueue {
  readonly kind = 'bullmq';
  readonly #options: BullMqOptions;
  readonly #redis: Redis;
  readonly queue: Queue<JobData>;

  /** The queue, once its Redis answers: a QueueError within seconds when it does not (redis-connection.ts). */
  static async open(options: BullMqOptions): Promise<BullMqQueue> {
    await assertRedisReachable(options.redisUrl);
    return new BullMqQueue(options);
  }

  constructor(options: BullMqOptions) {
    this.#options = options;
    this.#redis = redisConnection(options.redisUrl, 'client');
    this.queue = new Queue<JobData>(QUEUE_NAME, { connection: this.#redis, prefix: options.prefix });
    // A lost connection is the caller's error through the command that failed (redis-connection.ts), not a trace.
    this.queue.on('error', () => undefined);
  }

  async submit(request: ExperimentRequest, options: SubmitOptions = {}): Promise<SubmitResult> {
    const id = await attemptIdFor(this.#options.store, request, this.#options.clock.now(), { rerun: options.rerun });
    const { record, created } = await createQueued(this.#options.store, id, request, this.#options.clock);
    // Adding is idempotent by job id, so a record whose job was never added (a crash in between) gets it now.
    if (!isTerminal(record.status))
      await this.queue.add(
        'experiment',
        { id },
        { jobId: id, priority: STAGE_PRIORITY[request.stage], removeOnComplete: { count: 10_000 }, removeOnFail: { count: 10_000 } },
      );
    return { id, deduplicated: !created, record };
  }

  async cancel(id: string, reason: string): Promise<CancelResult> {
    const record = await this.#options.store.experiments.get(id);
    if (!record) return 'unknown';
    if (isTerminal(record.status)) return 'finished';
    const job = await this.queue.getJob(id);
    const state = job ? await job.getState() : 'unknown';
    if (job && (state === 'waiting' || state === 'prioritized' || state === 'delayed')) {
      await job.remove();
      await transition(this.#options.store, record, 'cancelled', this.#options.clock, {}, reason);
      return 'removed';
    }
    await requestCancel(this.#options.store, id, reason, this.#options.clock);
    await this.#redis.publish(cancelChannel(this.#options.prefix), id);
    return 'signalled';
  }

  /** Periodic A/A of a workload as a BullMQ job scheduler (upserted: safe to repeat from every worker). */
  async scheduleCalibration(workload: string, everyMs: number): Promise<void> {
    const request: ExperimentRequest = parseRequest({ workload, kind: 'aa', stage: 'periodic' });
    await this.queue.upsertJobScheduler(`aa:${workload}`, { every: everyMs }, { name: 'aa', data: { request }, opts: { priority: STAGE_PRIORITY.periodic } });
  }

  async setGlobalConcurrency(limit: number): Promise<void> {
    await this.queue.setGlobalConcurrency(limit);
  }

  async close(): Promise<void> {
    await this.queue.close();
    this.#redis.disconnect();
  }
}

export interface BullMqWorkerOptions extends BullMqOptions {
  readonly run: ExperimentRunner;
  readonly concurrency: number;
  readonly lockDurationMs: number;
  readonly stalledIntervalMs: number;
  readonly workloadLimits: ReadonlyMap<string, number>;
  /** Errors of runs, for the worker's log (the store holds each experiment's own reason). */
  readonly onError?: (id: string, error: unknown) => void;
  /** Said once each time a connection loses Redis (it reconnects by itself). */
  readonly onConnectionLost?: (message: string) => void;
}

export class BullMqWorker {
  readonly #options: BullMqWorkerOptions;
  readonly #redis: Redis;
  readonly #subscriber: Redis;
  /** Given to BullMQ's Worker, which does not close a connection it was handed. */
  readonly #workerRedis: Redis;
  readonly #slots: WorkloadSlots;
  readonly #running = new Map<string, AbortController>();
  readonly worker: Worker<JobData>;

  constructor(options: BullMqWorkerOptions) {
    this.#options = options;
    this.#redis = redisConnection(options.redisUrl, 'blocking', options.onConnectionLost);
    this.#subscriber = redisConnection(options.redisUrl, 'blocking', options.onConnectionLost);
    this.#slots = new WorkloadSlots(this.#redis, options.prefix, options.clock);
    void this.#subscriber.subscribe(cancelChannel(options.prefix));
    this.#subscriber.on('message', (_channel: string, id: string) => this.#running.get(id)?.abort(new ExperimentCancelledError('cancelled by request')));
    this.#workerRedis = redisConnection(options.redisUrl, 'blocking', options.onConnectionLost);
    this.worker = new Worker<JobData>(QUEUE_NAME, (job, token) => this.#process(job, token), {
      connection: this.#workerRedis,
      prefix: options.prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      // A job may outlive several crashed workers before it finishes.
      maxStalledCount: 5,
    });
    this.worker.on('error', () => undefined);
  }

  /** Ids of the experiments this worker is running. */
  get running(): readonly string[] {
    return [...this.#running.keys()];
  }

  async #process(job: Job<JobData>, token: string | undefined): Promise<void> {
    const { store, clock } = this.#options;
    let id = job.data.id;
    if (id === undefined) {
      // A scheduled (periodic) job carries a request: it becomes an experiment of its own.
      const request = parseRequest(job.data.request);
      id = `aa-${request.workload}-${(job.id ?? experimentIdFor(request, clock.now())).replace(/[^A-Za-z0-9._-]/g, '-')}`.slice(0, 128);
      await createQueued(store, id, request, clock);
    }
    const record = await store.experiments.get(id);
    if (!record || isTerminal(record.status)) return;
    const limit = this.#options.workloadLimits.get(record.workload);
    if (limit !== undefined && !(await this.#slots.acquire(record.workload, id, limit))) {
      // The workload's reservation is full: try again shortly, without holding a worker slot.
      await job.moveToDelayed(this.#options.clock.now() + 500, token);
      throw new DelayedError();
    }
    const controller = new AbortController();
    const done = new AbortController();
    this.#running.set(id, controller);
    if (limit !== undefined) this.#slots.hold(record.workload, id, limit, done.signal);
    const watching = watchCancellation(store, id, controller, clock, done.signal);
    try {
      await this.#options.run(id, controller.signal);
    } catch (error) {
      this.#options.onError?.(id, error);
    } finally {
      done.abort();
      await watching;
      this.#running.delete(id);
      if (limit !== undefined) await this.#slots.release(record.workload, id).catch(() => undefined);
    }
  }

  /** Stop taking jobs and let running experiments end (cancelled when `force`). */
  async close(force = false): Promise<void> {
    if (force) for (const controller of this.#running.values()) controller.abort(new ExperimentCancelledError('cancelled: worker shutting down'));
    await this.worker.close(force);
    this.#workerRedis.disconnect();
    this.#subscriber.disconnect();
    this.#redis.disconnect();
  }
}
