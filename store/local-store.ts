/**
 * The embedded default: plain files under `.tandem/` that a person can read.
 * Append-only data is NDJSON (whole lines, torn tails skipped on read);
 * experiment records are JSON written to a temporary file and renamed.
 *
 *   corpus/<tier>/<YYYYMMDDHH>.ndjson      recorded requests
 *   samples/<experiment>.ndjson            time series
 *   outcomes/<experiment>/<trial>.ndjson   per-request outcomes of replays
 *   experiments/<id>.json                  experiment record (trials, verdict)
 *   experiments/<id>.events.ndjson         lifecycle events
 *   experiments/summaries.ndjson           summary index for listings (local/experiment-index.ts)
 *   observations/<experiment>.ndjson       detector checks
 *   config-reads/<YYYYMMDD>.ndjson         config consumption index
 *   errors/<YYYYMMDD>.ndjson               dependency error records
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { ConfigRead, DependencyErrorRecord, DetectorObservation, ExperimentEvent, ExperimentRecord, RequestOutcome, Sample } from '../core/index.js';
import type {
  ConfigReadStore,
  ConfigReadSummary,
  ErrorRecordStore,
  ExperimentStore,
  ObservationStore,
  OutcomeAggregate,
  OutcomeFields,
  OutcomeStore,
  ReadOptions,
  SampleStore,
  Store,
} from './store.js';
import { InputError, errorMessage } from '../core/index.js';
import { assertName } from './names.js';
import { OutcomeAggregator } from './outcome-aggregates.js';
import { matchesQuery, newestFirst, pageOf, type ExperimentQuery, type ExperimentSummary } from './experiment-query.js';
import { ExperimentIndex } from './local/experiment-index.js';
import { latestConfigReads, matchesErrorFilter, type ErrorRecordFilter } from './filters.js';
import {
  isConfigRead,
  isDependencyErrorRecord,
  isDetectorObservation,
  isExperimentEvent,
  experimentRecordOf,
  isRequestOutcome,
  isSample,
} from './record-guards.js';
import { LocalFiles } from './local/local-files.js';
import { LocalCorpusStore } from './local/local-corpus-store.js';
import { appendLines, readJsonLines } from './local/ndjson-file.js';
import { writeFileAtomic } from './local/atomic-file.js';

const DAY_MS = 86_400_000;

/** UTC day of a time, as used in day-bucketed file names. */
function dayName(timeMs: number): string {
  return new Date(Math.floor(timeMs / DAY_MS) * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '');
}

function dayStartMs(name: string): number {
  return Date.UTC(Number(name.slice(0, 4)), Number(name.slice(4, 6)) - 1, Number(name.slice(6, 8)));
}

/** Append records to files chosen per record, one write per file. */
async function appendGrouped<T>(files: LocalFiles, folder: string, records: readonly T[], fileOf: (record: T) => string, nested = false): Promise<void> {
  const groups = new Map<string, string[]>();
  for (const record of records) {
    const path = join(files.dir, folder, fileOf(record));
    let lines = groups.get(path);
    if (!lines) groups.set(path, (lines = []));
    lines.push(JSON.stringify(record));
  }
  for (const [path, lines] of groups) {
    await files.guard(`append to ${path}`, async () => {
      await files.ensureDir(nested ? dirname(path) : join(files.dir, folder));
      await appendLines(path, lines);
    });
  }
}

/** Records of the day-bucketed files of `folder` that may hold times at or after `sinceMs`. */
async function* readDays<T>(files: LocalFiles, folder: string, sinceMs: number, accept: (v: unknown) => v is T, options: ReadOptions): AsyncGenerator<T> {
  const days = (await files.list(folder)).filter((name) => /^\d{8}\.ndjson$/.test(name)).sort();
  for (const day of days) {
    if (dayStartMs(day) + DAY_MS <= sinceMs) continue;
    yield* readJsonLines(join(files.dir, folder, day), accept, options);
  }
}

class LocalSampleStore implements SampleStore {
  constructor(readonly files: LocalFiles) {}

  append(samples: readonly Sample[]): Promise<void> {
    return appendGrouped(this.files, 'samples', samples, (s) => `${assertName(s.experimentId, 'sample experimentId')}.ndjson`);
  }

  async *read(experimentId: string, options: ReadOptions & { metric?: string; arm?: string; trial?: number } = {}): AsyncIterable<Sample> {
    const path = join(this.files.dir, 'samples', `${assertName(experimentId, 'experiment id')}.ndjson`);
    const matching: Sample[] = [];
    for await (const s of readJsonLines(path, isSample, options)) {
      if (options.metric !== undefined && s.metric !== options.metric) continue;
      if (options.arm !== undefined && s.arm !== options.arm) continue;
      if (options.trial !== undefined && s.trial !== options.trial) continue;
      matching.push(s);
    }
    // Writers append roughly in time order; a stable sort makes the order exact.
    yield* matching.sort((a, b) => a.timeMs - b.timeMs);
  }
}

/** One file per trial, so a read sorts one trial at a time in memory, never a whole experiment. */
class LocalOutcomeStore implements OutcomeStore {
  constructor(readonly files: LocalFiles) {}

  append(outcomes: readonly RequestOutcome[]): Promise<void> {
    return appendGrouped(this.files, 'outcomes', outcomes, (o) => join(assertName(o.experimentId, 'outcome experimentId'), `${o.trial}.ndjson`), true);
  }

  async *read(experimentId: string, options: ReadOptions & { trial?: number; arm?: string; fields?: OutcomeFields } = {}): AsyncIterable<RequestOutcome> {
    const folder = join('outcomes', assertName(experimentId, 'experiment id'));
    for (const trial of await this.#trials(folder, options.trial)) {
      const rows: RequestOutcome[] = [];
      for await (const o of readJsonLines(join(this.files.dir, folder, `${trial}.ndjson`), isRequestOutcome, options)) {
        if (options.arm !== undefined && o.arm !== options.arm) continue;
        // Timing only: bodies and response views are most of a stored outcome and judging reads none of them.
        rows.push(options.fields === 'timing' ? withoutResponse(o) : o);
      }
      yield* rows.sort((a, b) => a.intendedMs - b.intendedMs || (a.arm < b.arm ? -1 : a.arm > b.arm ? 1 : 0));
    }
  }

  async aggregate(experimentId: string, options: ReadOptions & { trial?: number } = {}): Promise<OutcomeAggregate[]> {
    const folder = join('outcomes', assertName(experimentId, 'experiment id'));
    const aggregator = new OutcomeAggregator();
    // Streamed line by line, never sorted: memory holds the aggregates, not the outcomes.
    for (const trial of await this.#trials(folder, options.trial)) {
      for await (const o of readJsonLines(join(this.files.dir, folder, `${trial}.ndjson`), isRequestOutcome, options)) aggregator.add(o);
    }
    return aggregator.aggregates();
  }

  async #trials(folder: string, only: number | undefined): Promise<number[]> {
    return (await this.files.list(folder))
      .map((name) => /^(\d+)\.ndjson$/.exec(name)?.[1])
      .filter((t): t is string => t !== undefined)
      .map(Number)
      .filter((t) => only === undefined || t === only)
      .sort((a, b) => a - b);
  }
}

/** An outcome without its body and response view. */
function withoutResponse(o: RequestOutcome): RequestOutcome {
  if (o.body === undefined && o.response === undefined) return o;
  const { body: _body, response: _response, ...timing } = o;
  return timing;
}

class LocalExperimentStore implements ExperimentStore {
  readonly #index: ExperimentIndex;
  constructor(readonly files: LocalFiles) {
    this.#index = new ExperimentIndex(files);
  }

  #path(id: string, suffix: string): string {
    return join(this.files.dir, 'experiments', `${assertName(id, 'experiment id')}${suffix}`);
  }

  async put(record: ExperimentRecord): Promise<void> {
    const path = this.#path(record.id, '.json');
    await this.files.guard(`write ${path}`, async () => {
      await this.files.ensureDir(join(this.files.dir, 'experiments'));
      await writeFileAtomic(path, `${JSON.stringify(record, null, 2)}\n`);
      await this.#index.recordPut(record);
    });
  }

  async get(id: string): Promise<ExperimentRecord | undefined> {
    const path = this.#path(id, '.json');
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw this.files.wrap(`read ${path}`, error);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new InputError(`local store: experiment record ${path} is corrupt (${errorMessage(error)})`, { cause: error, hint: `restore or delete ${path}` });
    }
    const record = experimentRecordOf(value);
    if (!record) throw new InputError(`local store: ${path} is not an experiment record (fields missing)`, { hint: `restore or delete ${path}` });
    return record;
  }

  async list(query: ExperimentQuery = {}): Promise<ExperimentRecord[]> {
    const { offset, limit } = pageOf(query);
    const page = (await this.#matching(query)).slice(offset, limit === undefined ? undefined : offset + limit);
    // The page is read from the record files, which are the truth (see experiment-index.ts).
    const records: ExperimentRecord[] = [];
    for (const summary of page) {
      const record = await this.get(summary.id).catch(() => undefined);
      if (record !== undefined) records.push(record);
    }
    return records;
  }

  async count(query: ExperimentQuery = {}): Promise<number> {
    return (await this.#matching(query)).length;
  }

  async #matching(query: ExperimentQuery): Promise<ExperimentSummary[]> {
    return (await this.#index.all()).filter((s) => matchesQuery(s, query)).sort(newestFirst);
  }

  async appendEvent(event: ExperimentEvent): Promise<void> {
    const path = this.#path(event.experimentId, '.events.ndjson');
    await this.files.guard(`append to ${path}`, async () => {
      await this.files.ensureDir(join(this.files.dir, 'experiments'));
      await appendLines(path, [JSON.stringify(event)]);
    });
  }

  async events(experimentId: string, options: ReadOptions & { types?: readonly string[] } = {}): Promise<ExperimentEvent[]> {
    const events: ExperimentEvent[] = [];
    const wanted = options.types === undefined ? undefined : new Set(options.types);
    for await (const e of readJsonLines(this.#path(experimentId, '.events.ndjson'), isExperimentEvent, options))
      if (!wanted || wanted.has(e.type)) events.push(e);
    return events;
  }
}

class LocalObservationStore implements ObservationStore {
  constructor(readonly files: LocalFiles) {}

  append(observations: readonly DetectorObservation[]): Promise<void> {
    return appendGrouped(this.files, 'observations', observations, (o) => `${assertName(o.experimentId, 'observation experimentId')}.ndjson`);
  }

  async read(experimentId: string, options: ReadOptions & { detector?: string } = {}): Promise<DetectorObservation[]> {
    const path = join(this.files.dir, 'observations', `${assertName(experimentId, 'experiment id')}.ndjson`);
    const out: DetectorObservation[] = [];
    for await (const o of readJsonLines(path, isDetectorObservation, options)) {
      if (options.detector === undefined || o.detector === options.detector) out.push(o);
    }
    return out.sort((a, b) => a.timeMs - b.timeMs);
  }
}

class LocalConfigReadStore implements ConfigReadStore {
  constructor(readonly files: LocalFiles) {}

  append(reads: readonly ConfigRead[]): Promise<void> {
    return appendGrouped(this.files, 'config-reads', reads, (r) => `${dayName(r.timeMs)}.ndjson`);
  }

  async latest(filter: { sinceMs: number; service?: string; file?: string }, options: ReadOptions = {}): Promise<ConfigReadSummary[]> {
    return latestConfigReads(readDays(this.files, 'config-reads', filter.sinceMs, isConfigRead, options), filter);
  }
}

class LocalErrorRecordStore implements ErrorRecordStore {
  constructor(readonly files: LocalFiles) {}

  append(records: readonly DependencyErrorRecord[]): Promise<void> {
    return appendGrouped(this.files, 'errors', records, (r) => `${dayName(r.timeMs)}.ndjson`);
  }

  async query(filter: ErrorRecordFilter, options: ReadOptions = {}): Promise<DependencyErrorRecord[]> {
    const out: DependencyErrorRecord[] = [];
    for await (const r of readDays(this.files, 'errors', filter.sinceMs, isDependencyErrorRecord, options)) {
      if (matchesErrorFilter(r, filter)) out.push(r);
    }
    return out.sort((a, b) => a.timeMs - b.timeMs);
  }
}

/** Options of the local backend. */
export interface LocalStoreOptions {
  /** Directory of the store; created on `init()` or first write. @default ".tandem" */
  readonly dir: string;
}

export class LocalStore implements Store {
  readonly kind = 'local';
  readonly location: string;
  readonly corpus: LocalCorpusStore;
  readonly samples: SampleStore;
  readonly outcomes: OutcomeStore;
  readonly experiments: ExperimentStore;
  readonly observations: ObservationStore;
  readonly configReads: ConfigReadStore;
  readonly errors: ErrorRecordStore;
  readonly #files: LocalFiles;

  constructor(options: LocalStoreOptions) {
    this.location = resolve(options.dir);
    this.#files = new LocalFiles(this.location);
    this.corpus = new LocalCorpusStore(this.#files);
    this.samples = new LocalSampleStore(this.#files);
    this.outcomes = new LocalOutcomeStore(this.#files);
    this.experiments = new LocalExperimentStore(this.#files);
    this.observations = new LocalObservationStore(this.#files);
    this.configReads = new LocalConfigReadStore(this.#files);
    this.errors = new LocalErrorRecordStore(this.#files);
  }

  async init(): Promise<void> {
    for (const folder of ['', 'corpus', 'samples', 'outcomes', 'experiments', 'observations', 'config-reads', 'errors']) {
      const path = join(this.location, folder);
      await this.#files.guard(`create ${path}`, () => this.#files.ensureDir(path));
    }
  }

  async close(): Promise<void> {
    // Every write is complete when its promise resolves; nothing is buffered.
  }
}

export function createLocalStore(options: LocalStoreOptions): LocalStore {
  return new LocalStore(options);
}
