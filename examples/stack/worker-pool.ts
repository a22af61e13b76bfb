/**
 * Workers of a service, as the FIRE failure modes need them: a worker can
 * crash (its in-flight requests fail), is unavailable until it restarts, and
 * every restart is counted. The example services run their workers in one
 * event loop (a thread per worker would cost ~80 ms of start-up each); what a
 * caller and a monitor observe — failed requests, a restart counter, reduced
 * capacity while restarting — is the same.
 */
import type { Clock } from '../../core/clock.js';

export class WorkerCrashedError extends Error {
  constructor(
    readonly workerId: number,
    reason: string,
  ) {
    super(`worker ${workerId} crashed: ${reason}`);
  }
}

export class NoWorkerAvailableError extends Error {
  constructor(service: string) {
    super(`${service}: every worker is restarting`);
  }
}

/** A worker's handle, given to the task it runs. */
export interface Worker {
  readonly id: number;
  /** Crash this worker: fail its in-flight tasks and restart it after the delay. */
  crash(reason: string): void;
}

interface WorkerState {
  readonly id: number;
  alive: boolean;
  readonly inflight: Set<(error: Error) => void>;
}

export interface WorkerPoolOptions {
  readonly service: string;
  readonly size: number;
  readonly clock: Clock;
  /** How long a crashed worker stays down. @default 250 */
  readonly restartDelayMs?: number;
  /** Called once per crash, with the worker and the reason. */
  readonly onCrash?: (workerId: number, reason: string) => void;
}

export class WorkerPool {
  readonly #workers: WorkerState[];
  readonly #options: WorkerPoolOptions;
  readonly #timers = new Set<AbortController>();
  #next = 0;
  #restarts = 0;
  #closed = false;

  constructor(options: WorkerPoolOptions) {
    this.#options = options;
    this.#workers = Array.from({ length: options.size }, (_, id) => ({ id, alive: true, inflight: new Set() }));
  }

  get restarts(): number {
    return this.#restarts;
  }

  get alive(): number {
    return this.#workers.filter((w) => w.alive).length;
  }

  /** Run `task` on the next live worker (round robin). Rejects when it crashes mid-task. */
  run<T>(task: (worker: Worker) => Promise<T>): Promise<T> {
    const state = this.#pick();
    if (!state) return Promise.reject(new NoWorkerAvailableError(this.#options.service));
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const fail = (error: Error): void => {
        if (settled) return;
        settled = true;
        reject(error);
      };
      state.inflight.add(fail);
      const worker: Worker = { id: state.id, crash: (reason) => this.#crash(state, reason) };
      task(worker).then(
        (value) => {
          state.inflight.delete(fail);
          if (!settled) {
            settled = true;
            resolve(value);
          }
        },
        (error: unknown) => {
          state.inflight.delete(fail);
          fail(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  close(): void {
    this.#closed = true;
    for (const timer of this.#timers) timer.abort();
    this.#timers.clear();
  }

  #pick(): WorkerState | undefined {
    for (let tried = 0; tried < this.#workers.length; tried++) {
      const state = this.#workers[this.#next++ % this.#workers.length]!;
      if (state.alive) return state;
    }
    return undefined;
  }

  #crash(state: WorkerState, reason: string): void {
    if (!state.alive) return;
    state.alive = false;
    this.#restarts++;
    const error = new WorkerCrashedError(state.id, reason);
    for (const fail of [...state.inflight]) fail(error);
    state.inflight.clear();
    this.#options.onCrash?.(state.id, reason);
    const timer = new AbortController();
    this.#timers.add(timer);
    this.#options.clock.sleep(this.#options.restartDelayMs ?? 250, timer.signal).then(
      () => {
        this.#timers.delete(timer);
        if (!this.#closed) state.alive = true;
      },
      () => this.#timers.delete(timer),
    );
  }
}
