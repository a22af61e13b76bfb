/**
 * The recorder shared by the sidecar and the in-process wrappers: decides
 * (sampler), skips Tandem's own replayed traffic, builds redacted records,
 * and hands them to the background writer. Its metrics say what it forwarded,
 * sampled, dropped and why, and the rate it is sampling at now.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { Clock } from '../core/index.js';
import type { CorpusStore } from '../store/index.js';
import { Sampler, type StickyKey } from './sampler.js';
import { Redactor, type RedactionRules } from './redact.js';
import { CorpusWriter } from './corpus-writer.js';
import { buildRecord, type CapturedRequest } from './record-builder.js';

export type { CapturedRequest } from './record-builder.js';

/** Requests carrying this header come from a Tandem replay and are never recorded. */
export const EXPERIMENT_HEADER = 'x-tandem-experiment';

export interface RecorderOptions {
  readonly tier: string;
  readonly store: CorpusStore;
  readonly clock: Clock;
  /** Share of requests recorded, in (0, 1]. */
  readonly rate: number;
  readonly stickyKey?: StickyKey;
  readonly redact?: RedactionRules;
  /** Larger bodies are not stored; the record is marked truncated. @default 1048576 */
  readonly maxBodyBytes?: number;
  /** Records waiting to be written before new ones are dropped. @default 10000 */
  readonly bufferRecords?: number;
  /** Shortest time between two recovery steps of the rate after shedding. @default 1000 */
  readonly recoveryIntervalMs?: number;
  /** Longest a shutdown waits for buffered records to be written. @default 5000 */
  readonly closeTimeoutMs?: number;
  /** Where the recorder says that it sheds or recovers. @default stderr */
  readonly log?: (line: string) => void;
  /** Injectable randomness for tests. */
  readonly random?: () => number;
  /** Requests carrying any of these headers (lower-case) come from a replay and are never recorded. @default [EXPERIMENT_HEADER] */
  readonly skipHeaders?: readonly string[];
}

export class Recorder {
  readonly tier: string;
  readonly maxBodyBytes: number;
  readonly registry = new Registry();
  readonly sampler: Sampler;
  readonly #redactor: Redactor;
  readonly #writer: CorpusWriter;
  readonly #clock: Clock;
  readonly #closeTimeoutMs: number;
  readonly #counts = { forwarded: 0, sampled: 0, skippedReplay: 0, withheld: 0, abandoned: 0, bytes: 0, upstreamErrors: new Map<string, number>() };
  readonly #skipHeaders: readonly string[];

  constructor(options: RecorderOptions) {
    this.tier = options.tier;
    this.#skipHeaders = (options.skipHeaders ?? [EXPERIMENT_HEADER]).map((h) => h.toLowerCase());
    this.maxBodyBytes = options.maxBodyBytes ?? 1_048_576;
    this.#clock = options.clock;
    this.#closeTimeoutMs = options.closeTimeoutMs ?? 5_000;
    const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    const registers = [this.registry];
    this.registry.setDefaultLabels({ tier: options.tier });
    const sampler = (this.sampler = new Sampler({
      rate: options.rate,
      clock: options.clock,
      ...(options.stickyKey ? { stickyKey: options.stickyKey } : {}),
      ...(options.random ? { random: options.random } : {}),
      ...(options.recoveryIntervalMs !== undefined ? { recoveryIntervalMs: options.recoveryIntervalMs } : {}),
      onRateChange: (rate, reason) =>
        log(`tandem recorder (${options.tier}): ${reason === 'shed' ? 'shedding' : 'recovering'}, sampling rate now ${rate.toPrecision(3)} (configured ${options.rate})`),
    }));
    const counts = this.#counts;
    /** A Prometheus counter read from a plain number: the request path only does `n++`. */
    const counter = (name: string, help: string, read: () => number): Counter =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    counter('recorder_forwarded_total', 'Requests that passed through.', () => counts.forwarded);
    counter('recorder_sampled_total', 'Requests chosen for the corpus.', () => counts.sampled);
    counter('recorder_replay_skipped_total', "Requests not recorded because they carry Tandem's experiment identity.", () => counts.skippedReplay);
    counter('recorder_written_total', 'Records written to the corpus store.', () => this.#writer.written);
    counter('recorder_withheld_total', 'Sampled records stored without their body because it could not be redacted.', () => counts.withheld);
    counter('recorder_abandoned_total', 'Sampled requests whose client never finished sending the body (not recorded).', () => counts.abandoned);
    counter('recorder_bytes_total', 'Body bytes of sampled records.', () => counts.bytes);
    const writer = (): CorpusWriter => this.#writer;
    new Counter({
      name: 'recorder_dropped_total',
      help: 'Sampled records dropped, by reason.',
      labelNames: ['reason'],
      registers,
      collect() {
        this.reset();
        for (const [reason, count] of Object.entries(writer().dropped)) this.inc({ reason }, count);
      },
    });
    new Counter({
      name: 'recorder_upstream_errors_total',
      help: 'Upstream failures passed on to clients, by kind.',
      labelNames: ['kind'],
      registers,
      collect() {
        this.reset();
        for (const [kind, count] of counts.upstreamErrors) this.inc({ kind }, count);
      },
    });
    new Gauge({
      name: 'recorder_sampling_rate',
      help: 'Sampling rate in force (lower than configured while shedding).',
      registers,
      collect() {
        this.set(sampler.effectiveRate);
      },
    });
    new Gauge({
      name: 'recorder_buffered_records',
      help: 'Records waiting to be written.',
      registers,
      collect() {
        this.set(writer().buffered);
      },
    });
    this.#redactor = new Redactor(options.redact, { maxDecodedBytes: this.maxBodyBytes });
    this.#writer = new CorpusWriter({
      store: options.store,
      capacity: options.bufferRecords ?? 10_000,
      clock: options.clock,
      onDrop: () => sampler.shed(),
      onWritten: () => sampler.recover(),
    });
  }

  /**
   * Decide for one request; cheap and allocation-free when the answer is no.
   * Counts the request as forwarded.
   */
  shouldRecord(url: string, headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
    this.#counts.forwarded++;
    for (const header of this.#skipHeaders) {
      if (headers[header] !== undefined) {
        this.#counts.skippedReplay++;
        return false;
      }
    }
    return this.sampler.sample(url, headers);
  }

  now(): number {
    return this.#clock.now();
  }

  /**
   * Build the redacted record and queue it. Never throws, never waits: nothing
   * done with a sampled request may reach the client's response, so a record
   * that cannot be built is dropped and counted (`record-error`).
   */
  record(request: CapturedRequest): void {
    this.#counts.sampled++;
    let record;
    try {
      record = buildRecord(this.tier, this.#redactor, request, { rate: this.sampler.effectiveRate, mode: this.sampler.mode });
    } catch {
      this.#writer.dropUnbuilt();
      return;
    }
    if (record.bodyWithheld === true) this.#counts.withheld++;
    this.#counts.bytes += Math.floor((record.body.length * 3) / 4);
    this.#writer.offer(record);
  }

  /** What became of sampled requests: sampled = written + dropped + buffered; abandoned ones (client left mid-body) are not sampled records. */
  get accounting(): { sampled: number; written: number; dropped: number; buffered: number; withheld: number; abandoned: number } {
    const dropped = Object.values(this.#writer.dropped).reduce((a, b) => a + b, 0);
    return { sampled: this.#counts.sampled, written: this.#writer.written, dropped, buffered: this.#writer.buffered, withheld: this.#counts.withheld, abandoned: this.#counts.abandoned };
  }

  /** A sampled request whose body never completed: not recorded, counted. */
  abandon(): void {
    this.#counts.abandoned++;
  }

  /** Count an upstream failure that was passed on to the client. */
  upstreamError(kind: string): void {
    this.#counts.upstreamErrors.set(kind, (this.#counts.upstreamErrors.get(kind) ?? 0) + 1);
  }

  get writer(): CorpusWriter {
    return this.#writer;
  }

  /** Write what is buffered and stop. */
  close(): Promise<void> {
    return this.#writer.close(this.#closeTimeoutMs);
  }
}
