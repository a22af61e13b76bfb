/**
 * Writes sampled records to the corpus store without ever making the
 * recorded service wait: `offer` is synchronous and only appends to a bounded
 * buffer; batches are written in the background, one write at a time. A full
 * buffer drops the new record; a failed write drops its batch. Both are
 * counted and reported, so the sampler can shed.
 */
import type { Clock, CorpusRecord } from '../core/index.js';
import type { CorpusStore } from '../store/index.js';

/**
 * `record-error`: a sampled request could not be made into a record at all (nothing stored, the client unaffected);
 * `queue-full`: it arrived while the records waiting to be built already filled their queue (record-thread.ts).
 */
export type DropReason = 'buffer-full' | 'store-error' | 'record-error' | 'queue-full';

export interface CorpusWriterOptions {
  readonly store: CorpusStore;
  /** Records that may wait to be written. */
  readonly capacity: number;
  readonly clock: Clock;
  /** Records per store write. @default 500 */
  readonly batchSize?: number;
  /** Body and message bytes per store write (at least one record): a write's encoding is one turn of the loop. @default 262144 */
  readonly batchBytes?: number;
  /** Longest a record waits before a write starts. @default 200 */
  readonly flushIntervalMs?: number;
  readonly onDrop?: (reason: DropReason, count: number, error?: unknown) => void;
  readonly onWritten?: (count: number) => void;
}

export class CorpusWriter {
  readonly #options: CorpusWriterOptions;
  readonly #timer = new AbortController();
  #buffer: CorpusRecord[] = [];
  #writing: Promise<void> | undefined;
  #closed = false;
  #written = 0;
  #inFlight = 0;
  #dropped = { 'buffer-full': 0, 'store-error': 0, 'record-error': 0, 'queue-full': 0 };

  constructor(options: CorpusWriterOptions) {
    this.#options = options;
    void this.#tick();
  }

  /** Records not yet written nor dropped: waiting, or in the write now under way (so sampled = written + dropped + buffered). */
  get buffered(): number {
    return this.#buffer.length + this.#inFlight;
  }

  get written(): number {
    return this.#written;
  }

  get dropped(): Readonly<Record<DropReason, number>> {
    return this.#dropped;
  }

  /** Queue a record; false when it was dropped because the buffer is full. Never waits. */
  offer(record: CorpusRecord): boolean {
    if (this.#closed || this.#buffer.length >= this.#options.capacity) {
      this.#drop('buffer-full', 1);
      return false;
    }
    this.#buffer.push(record);
    if (this.#buffer.length >= (this.#options.batchSize ?? 500)) this.#startWrite();
    return true;
  }

  /** Count a sampled record that never reached `offer`; a full build queue is reported like a full buffer (the sampler sheds). */
  dropUnbuilt(reason: 'record-error' | 'queue-full' = 'record-error'): void {
    if (reason === 'queue-full') this.#drop(reason, 1);
    else this.#dropped[reason]++;
  }

  /** Write everything buffered now (tests, shutdown). */
  async flush(): Promise<void> {
    while (this.#buffer.length > 0 || this.#writing) {
      if (!this.#writing) this.#startWrite();
      await this.#writing;
    }
  }

  /**
   * Stop the timer and write what is buffered, for at most `timeoutMs`: a hung
   * store must not hang a shutdown. What could not be written by then is
   * counted as dropped (store-error).
   */
  async close(timeoutMs = 5_000): Promise<void> {
    this.#closed = true;
    this.#timer.abort();
    const deadline = new AbortController();
    const timedOut = this.#options.clock.sleep(timeoutMs, deadline.signal).then(
      () => true,
      () => false,
    );
    const finished = await Promise.race([this.flush().then(() => false), timedOut]);
    deadline.abort();
    if (finished && this.#buffer.length > 0) {
      this.#drop('store-error', this.#buffer.length);
      this.#buffer = [];
    }
  }

  async #tick(): Promise<void> {
    const interval = this.#options.flushIntervalMs ?? 200;
    while (!this.#timer.signal.aborted) {
      try {
        await this.#options.clock.sleep(interval, this.#timer.signal);
      } catch {
        return;
      }
      if (this.#buffer.length > 0) this.#startWrite();
    }
  }

  #startWrite(): void {
    if (this.#writing || this.#buffer.length === 0) return;
    const length = this.#batchLength();
    // Records left behind by the byte limit, not the count, are written next, not at the next tick.
    const cutByBytes = length < Math.min(this.#buffer.length, this.#options.batchSize ?? 500);
    const batch = this.#buffer.splice(0, length);
    this.#inFlight = batch.length;
    this.#writing = this.#options.store
      .append(batch)
      .then(
        () => {
          this.#written += batch.length;
          this.#options.onWritten?.(batch.length);
        },
        (error: unknown) => this.#drop('store-error', batch.length, error),
      )
      .finally(() => {
        this.#inFlight = 0;
        this.#writing = undefined;
        // A slow write may have let a full batch accumulate behind it.
        if (cutByBytes || this.#buffer.length >= (this.#options.batchSize ?? 500)) this.#startWrite();
      });
  }

  /** How many of the buffered records the next write takes: up to the batch size and the batch bytes, at least one. */
  #batchLength(): number {
    const limit = Math.min(this.#buffer.length, this.#options.batchSize ?? 500);
    const maxBytes = this.#options.batchBytes ?? 262_144;
    let bytes = 0;
    for (let n = 0; n < limit; n++) {
      bytes += recordBytes(this.#buffer[n]!);
      if (bytes > maxBytes) return Math.max(1, n);
    }
    return limit;
  }

  #drop(reason: DropReason, count: number, error?: unknown): void {
    this.#dropped[reason] += count;
    this.#options.onDrop?.(reason, count, error);
  }
}

/** About how many bytes a record's encoding holds: its body and its response messages (base64 text). */
function recordBytes(record: CorpusRecord): number {
  let bytes = record.body.length;
  for (const message of record.grpc?.responseMessages ?? []) bytes += message.length;
  return bytes;
}
