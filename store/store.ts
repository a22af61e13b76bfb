/**
 * Storage interfaces. Feature code receives a `Store` and never constructs
 * one; `cli/` picks the backend by name (store/index.ts). Every backend passes
 * the same contract suite (test/store/store-contract.ts).
 */
import type {
  ConfigRead,
  CorpusRecord,
  DependencyErrorRecord,
  DetectorObservation,
  ExperimentEvent,
  ExperimentRecord,
  RequestOutcome,
  LatencyBuckets,
  Sample,
} from '../core/index.js';
import type { ExperimentQuery } from './experiment-query.js';

/** Options every read accepts. */
export interface ReadOptions {
  readonly signal?: AbortSignal;
  /**
   * Called for each stored line that cannot be read (a torn last line after a
   * crash, a corrupt row). Reads skip such lines and never throw for them.
   */
  readonly onCorrupt?: (where: string, reason: string) => void;
}

/** Per-tier summary for `tandem corpus ls`. */
export interface CorpusTierSummary {
  readonly tier: string;
  readonly count: number;
  readonly firstMs: number;
  readonly lastMs: number;
  readonly bytes: number;
}

/** Where recorded requests live. */
export interface CorpusStore {
  append(records: readonly CorpusRecord[]): Promise<void>;
  /**
   * Records of `tier` with `sinceMs <= timeMs < untilMs`, streamed so memory stays bounded.
   * Oldest UTC hour first; within an hour the order is the backend's own but
   * the same on every read (append order for local files, time for ClickHouse).
   */
  read(tier: string, options: ReadOptions & { sinceMs: number; untilMs?: number; limit?: number }): AsyncIterable<CorpusRecord>;
  tiers(options?: ReadOptions): Promise<CorpusTierSummary[]>;
  /** Delete records older than `beforeMs` (of one tier, or all); returns how many were deleted. */
  prune(beforeMs: number, tier?: string): Promise<number>;
}

/** Time series samples of experiments. */
export interface SampleStore {
  append(samples: readonly Sample[]): Promise<void>;
  /** Samples of one experiment, optionally narrowed; ordered by time. */
  read(experimentId: string, options?: ReadOptions & { metric?: string; arm?: string; trial?: number }): AsyncIterable<Sample>;
}

/**
 * How one arm's answers in one trial attempt were distributed: counts, sums and a latency sketch that
 * add across trials (core/latency-sketch.ts), so a report merges a few hundred numbers per trial.
 */
export interface OutcomeAggregate {
  readonly trial: number;
  readonly attempt: number;
  readonly arm: string;
  readonly count: number;
  readonly latencySumMs: number;
  readonly latencyMinMs: number;
  readonly latencyMaxMs: number;
  readonly bytesSum: number;
  /** Answers per error class (answers without an error are not listed). */
  readonly errors: Readonly<Record<string, number>>;
  /** Latency sketch: bucket index → answers (`latencyBucket`). */
  readonly latencyBuckets: LatencyBuckets;
}

/** Which outcome fields a read returns: `timing` leaves out bodies and response views (what judging needs). */
export type OutcomeFields = 'all' | 'timing';

/** Per-request outcomes of replays: the paired data the harness judges. */
export interface OutcomeStore {
  append(outcomes: readonly RequestOutcome[]): Promise<void>;
  /** Outcomes of one experiment, optionally of one trial and/or arm, ordered by trial then intended time. Streams. */
  read(experimentId: string, options?: ReadOptions & { trial?: number; arm?: string; fields?: OutcomeFields }): AsyncIterable<RequestOutcome>;
  /**
   * One aggregate per (trial, attempt, arm) of the experiment (of one trial when `trial` is given), ordered by
   * trial, attempt, arm. Computed where the data lives: ClickHouse in SQL, local files by streaming one trial's file at a time.
   */
  aggregate(experimentId: string, options?: ReadOptions & { trial?: number }): Promise<OutcomeAggregate[]>;
}

/** Experiments, their trials, verdicts and lifecycle events. */
export interface ExperimentStore {
  /** Insert or replace the whole record (last write wins by `updatedAtMs`). */
  put(record: ExperimentRecord): Promise<void>;
  get(id: string): Promise<ExperimentRecord | undefined>;
  /** Newest first (created time, then id descending); `offset` and `limit` page through the matches. */
  list(query?: ExperimentQuery): Promise<ExperimentRecord[]>;
  /** How many experiments match (ignoring `offset` and `limit`). */
  count(query?: ExperimentQuery): Promise<number>;
  appendEvent(event: ExperimentEvent): Promise<void>;
  /**
   * Events of one experiment in the order they happened; `types` keeps only those (a poller that watches for
   * one kind need not read the progress events a running experiment writes every second).
   */
  events(experimentId: string, options?: ReadOptions & { types?: readonly string[] }): Promise<ExperimentEvent[]>;
}

/** Every detector check, for the report and for audits of cancellations. */
export interface ObservationStore {
  append(observations: readonly DetectorObservation[]): Promise<void>;
  read(experimentId: string, options?: ReadOptions & { detector?: string }): Promise<DetectorObservation[]>;
}

/** Latest read of each (service, file, setting). */
export interface ConfigReadSummary {
  readonly service: string;
  readonly file: string;
  readonly setting: string;
  readonly lastReadMs: number;
}

/** The observed runtime consumption index of config files and settings. */
export interface ConfigReadStore {
  append(reads: readonly ConfigRead[]): Promise<void>;
  /** Latest read per (service, file, setting) at or after `sinceMs`. */
  latest(filter: { sinceMs: number; service?: string; file?: string }, options?: ReadOptions): Promise<ConfigReadSummary[]>;
}

/** Errors recorded by dependencies, attributed to callers. */
export interface ErrorRecordStore {
  append(records: readonly DependencyErrorRecord[]): Promise<void>;
  /** Records in `[sinceMs, untilMs)`, optionally of one dependency and/or implicating one of `jobs` or one experiment. */
  query(
    filter: { sinceMs: number; untilMs?: number; dependency?: string; experimentId?: string; jobs?: readonly string[] },
    options?: ReadOptions,
  ): Promise<DependencyErrorRecord[]>;
}

/** All stores of one backend. */
export interface Store {
  /** `local` or `clickhouse`. */
  readonly kind: string;
  /** Human description for logs: the directory or the URL. */
  readonly location: string;
  readonly corpus: CorpusStore;
  readonly samples: SampleStore;
  readonly outcomes: OutcomeStore;
  readonly experiments: ExperimentStore;
  readonly observations: ObservationStore;
  readonly configReads: ConfigReadStore;
  readonly errors: ErrorRecordStore;
  /** Create directories or tables; idempotent. */
  init(): Promise<void>;
  /** Flush and release connections. */
  close(): Promise<void>;
}
