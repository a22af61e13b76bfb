/**
 * The recorder's records are built in a worker thread (record-worker.ts): the event loop that forwards production's
 * traffic only copies a sampled exchange's bytes and posts them: decompressing a sampled answer of many gzip
 * messages on that loop held every other connection of the sidecar (issue 69; `npm run bench -- recorder-h2`).
 *
 * Jobs wait in a bounded queue, by count and by bytes: a full queue drops the new job and says so, never waits.
 * A worker that dies loses only the jobs it held, each counted; the next job starts a new one. At close, the jobs a
 * busy or starved worker (it runs at the lowest priority) never reached are built here, not lost.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CorpusRecord } from '../core/index.js';
import type { CapturedRequest } from './record-builder.js';
import { bytesOf, jobBuilder, type BuildJob, type BuildResult, type RecordThreadSettings } from './record-jobs.js';

export interface RecordThreadOptions extends RecordThreadSettings {
  /** Jobs that may wait to be built. */
  readonly maxJobs: number;
  /** Bytes those jobs may hold together. */
  readonly maxBytes: number;
  /** Each submitted job's end: its record, or undefined when it could not be built. */
  readonly onBuilt: (record: CorpusRecord | undefined) => void;
}

/**
 * The worker: the compiled JavaScript beside this file (the CLI's build), or, where this file runs as TypeScript
 * through a loader (tests, benches), its source, with tsx registered in the worker first: a worker does not inherit
 * the loader, and `--import tsx` in its execArgv does not reach an ES module entry.
 */
function startWorker(workerData: RecordThreadSettings): Worker {
  const compiled = new URL('./record-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(compiled))) return new Worker(compiled, { workerData });
  const source = new URL('./record-worker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then(({ register }) => { register(); return import(${JSON.stringify(source)}); });`;
  return new Worker(boot, { eval: true, workerData });
}

export class RecordThread {
  readonly #options: RecordThreadOptions;
  readonly #waiting = new Map<number, { readonly job: BuildJob; readonly bytes: number }>();
  #worker: Worker | undefined;
  #bytes = 0;
  #nextId = 0;
  #idle: (() => void)[] = [];

  constructor(options: RecordThreadOptions) {
    this.#options = options;
  }

  /** Jobs submitted and not yet built. */
  get pending(): number {
    return this.#waiting.size;
  }

  /** Queue one exchange to be built; false, and nothing queued, when the queue is full. Never waits. */
  submit(request: CapturedRequest, sampling: BuildJob['sampling']): boolean {
    const bytes = bytesOf(request);
    if (this.#waiting.size >= this.#options.maxJobs || this.#bytes + bytes > this.#options.maxBytes) return false;
    const job: BuildJob = { id: this.#nextId++, request, sampling };
    this.#waiting.set(job.id, { job, bytes });
    this.#bytes += bytes;
    this.#started().postMessage(job);
    return true;
  }

  /** Resolves once every job submitted so far is built (or lost). */
  idle(): Promise<void> {
    if (this.#waiting.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Stop the worker and build, on this thread, every job it had not answered; the queue's bounds bound that work. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker) await worker.terminate();
    if (this.#waiting.size === 0) return;
    const { tier, rules, maxBodyBytes, descriptorSet } = this.#options;
    const build = jobBuilder({ tier, rules, maxBodyBytes, ...(descriptorSet ? { descriptorSet } : {}) });
    for (const { job } of [...this.#waiting.values()]) this.#finish(job.id, build(job).record);
  }

  #started(): Worker {
    if (this.#worker) return this.#worker;
    const { tier, rules, maxBodyBytes, descriptorSet } = this.#options;
    const worker = startWorker({ tier, rules, maxBodyBytes, ...(descriptorSet ? { descriptorSet } : {}) });
    // The recorder's owner decides when the process ends; a shutdown waits for the queue (Recorder.close).
    worker.unref();
    worker.on('message', (result: BuildResult) => {
      this.#finish(result.id, result.record);
      // The next record at the next turn of the loop, after whatever production's traffic has waiting.
      setImmediate(() => {
        if (this.#worker === worker) worker.postMessage('ack');
      });
    });
    worker.on('error', () => undefined);
    worker.once('exit', () => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      this.#loseAll();
    });
    this.#worker = worker;
    return worker;
  }

  #finish(id: number, record: CorpusRecord | undefined): void {
    const waiting = this.#waiting.get(id);
    if (waiting === undefined) return;
    this.#waiting.delete(id);
    this.#bytes -= waiting.bytes;
    this.#options.onBuilt(record);
    if (this.#waiting.size === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  #loseAll(): void {
    for (const id of [...this.#waiting.keys()]) this.#finish(id, undefined);
  }
}
