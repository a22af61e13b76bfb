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
import type { RedactionRules } from './redact.js';
import { CorpusWriter } from './corpus-writer.js';
import type { CapturedRequest } from './record-builder.js';
import { RecordThread } from './record-thread.js';
import type { BuildJob } from './record-jobs.js';

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
  /** Sampled exchanges waiting to be built into records (off the event loop) before new ones are dropped. @default 1000 */
  readonly buildQueueRecords?: number;
  /** Bytes those exchanges may hold together. @default 64 MiB */
  readonly buildQueueBytes?: number;
  /** Shortest time between two recovery steps of the rate after shedding. @default 1000 */
  readonly recoveryIntervalMs?: number;
  /** Longest a shutdown waits for buffered records to be written. @default 5000 */
  readonly closeTimeoutMs?: number;
  /** Where the recorder says that it sheds or recovers. @default stderr */
  readonly log?: (line: string) => void;
  /** Injectable randomness for tests. */
  readonly random?: () => number;
  /** gRPC methods whose response messages are not kept: "package.Service/Method" or "package.Service/*". */
  readonly grpcWithoutResponses?: readonly string[];
  /** The services' FileDescriptorSet (net/grpc-schema.ts loadDescriptorSet): protobuf messages are redacted by field name. */
  readonly grpcDescriptorSet?: Uint8Array;
  /** Requests carrying any of these headers (lower-case) come from a replay and are never recorded. @default [EXPERIMENT_HEADER] */
  readonly skipHeaders?: readonly string[];
  /**
   * The requests are copies an edge proxy mirrored after sampling them at this rate (`tandem collect`): each record
   * says so (`sampleMode: 'mirror'`), and its rate is this times the recorder's own.
   */
  readonly mirroredAtRate?: number;
}

export class Recorder {
  readonly tier: string;
  readonly maxBodyBytes: number;
  readonly registry = new Registry();
  readonly sampler: Sampler;
  readonly #thread: RecordThread;
  readonly #writer: CorpusWriter;
  readonly #clock: Clock;
  readonly #closeTimeoutMs: number;
  readonly #counts = {
    forwarded: 0,
    sampled: 0,
    skippedReplay: 0,
    withheld: 0,
    abandoned: 0,
    resetUnforwarded: 0,
    resetBudgetClosed: 0,
    untrusted: 0,
    bytes: 0,
    upstreamErrors: new Map<string, number>(),
  };
  readonly #skipHeaders: readonly string[];
  readonly #withoutResponses: ReadonlySet<string>;
  readonly #mirroredAtRate: number | undefined;

  constructor(options: RecorderOptions) {
    this.tier = options.tier;
    this.#skipHeaders = (options.skipHeaders ?? [EXPERIMENT_HEADER]).map((h) => h.toLowerCase());
    this.#withoutResponses = new Set(options.grpcWithoutResponses ?? []);
    this.#mirroredAtRate = options.mirroredAtRate;
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
        log(
          `tandem recorder (${options.tier}): ${reason === 'shed' ? 'shedding' : 'recovering'}, sampling rate now ${rate.toPrecision(3)} (configured ${options.rate})`,
        ),
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
    counter(
      'recorder_reset_unforwarded_total',
      "HTTP/2 streams the client reset, or that were over its connection's upstream stream limit, before they were forwarded (never opened upstream).",
      () => counts.resetUnforwarded,
    );
    counter(
      'recorder_reset_budget_closed_total',
      'HTTP/2 client connections closed for resetting streams before their answer faster than their budget (rapid reset).',
      () => counts.resetBudgetClosed,
    );
    counter('recorder_untrusted_total', 'Mirrored requests refused: neither from a trusted address nor carrying the shared token.', () => counts.untrusted);
    counter('recorder_bytes_total', 'Body bytes of sampled records.', () => counts.bytes);
    const writer = (): CorpusWriter => this.#writer;
    const waiting = (): number => this.#writer.buffered + this.#thread.pending;
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
      help: 'Records waiting to be built or written.',
      registers,
      collect() {
        this.set(waiting());
      },
    });
    this.#thread = new RecordThread({
      tier: options.tier,
      rules: options.redact,
      ...(options.grpcDescriptorSet ? { descriptorSet: options.grpcDescriptorSet } : {}),
      maxBodyBytes: this.maxBodyBytes,
      maxJobs: options.buildQueueRecords ?? 1_000,
      maxBytes: options.buildQueueBytes ?? 64 * 1_048_576,
      onBuilt: (record) => {
        if (record === undefined) return this.#writer.dropUnbuilt();
        if (record.bodyWithheld === true) counts.withheld++;
        counts.bytes += Math.floor((record.body.length * 3) / 4);
        this.#writer.offer(record);
      },
    });
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

  /** Whether a sampled call of this gRPC method keeps its response messages (RecorderOptions.grpcWithoutResponses). */
  keepsResponses(service: string, method: string): boolean {
    return this.#withoutResponses.size === 0 || !(this.#withoutResponses.has(`${service}/${method}`) || this.#withoutResponses.has(`${service}/*`));
  }

  now(): number {
    return this.#clock.now();
  }

  /**
   * Queue the exchange to be built into a redacted record off the event loop (record-thread.ts). Never throws, never
   * waits: nothing done with a sampled request may reach the client's response, so a record that cannot be built, or
   * that finds the build queue full, is dropped and counted (`record-error`, `queue-full`).
   */
  record(request: CapturedRequest): void {
    this.#counts.sampled++;
    const mirrored = this.#mirroredAtRate;
    const sampling: BuildJob['sampling'] =
      mirrored === undefined ? { rate: this.sampler.effectiveRate, mode: this.sampler.mode } : { rate: mirrored * this.sampler.effectiveRate, mode: 'mirror' };
    if (!this.#thread.submit(request, sampling)) this.#writer.dropUnbuilt('queue-full');
  }

  /** What became of sampled requests: sampled = written + dropped + buffered (waiting to be built or written); abandoned ones (client left mid-body) are not sampled records. */
  get accounting(): { sampled: number; written: number; dropped: number; buffered: number; withheld: number; abandoned: number } {
    const dropped = Object.values(this.#writer.dropped).reduce((a, b) => a + b, 0);
    return {
      sampled: this.#counts.sampled,
      written: this.#writer.written,
      dropped,
      buffered: this.#writer.buffered + this.#thread.pending,
      withheld: this.#counts.withheld,
      abandoned: this.#counts.abandoned,
    };
  }

  /** A mirrored request from an untrusted peer (collector.ts): not recorded, counted. */
  untrusted(): void {
    this.#counts.untrusted++;
  }

  /** A sampled request whose body never completed: not recorded, counted. */
  abandon(): void {
    this.#counts.abandoned++;
  }

  /** An HTTP/2 stream gone (reset by its client) or refused before it was forwarded: never opened upstream. */
  resetBeforeForwarding(): void {
    this.#counts.resetUnforwarded++;
  }

  /** An HTTP/2 client connection closed for resetting streams faster than its budget (net/reset-budget.ts). */
  connectionOverResetBudget(): void {
    this.#counts.resetBudgetClosed++;
  }

  /** Count an upstream failure that was passed on to the client. */
  upstreamError(kind: string): void {
    this.#counts.upstreamErrors.set(kind, (this.#counts.upstreamErrors.get(kind) ?? 0) + 1);
  }

  get writer(): CorpusWriter {
    return this.#writer;
  }

  /** Resolves once every exchange sampled so far is built and offered to the writer (or dropped). */
  built(): Promise<void> {
    return this.#thread.idle();
  }

  /** Build and write everything sampled so far (tests, shutdown). */
  async flush(): Promise<void> {
    await this.built();
    await this.#writer.flush();
  }

  /**
   * Give the worker up to the close timeout to build what is queued, build what it has not reached on this thread,
   * write for at most the close timeout, and stop; what cannot be written is counted as dropped.
   */
  async close(): Promise<void> {
    const deadline = new AbortController();
    await Promise.race([this.#thread.idle(), this.#clock.sleep(this.#closeTimeoutMs, deadline.signal).catch(() => undefined)]);
    deadline.abort();
    await this.#thread.close();
    await this.#writer.close(this.#closeTimeoutMs);
  }
}
