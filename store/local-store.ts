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
import { join, resolve } from 'node:path';
import type { ConfigReadStore, ErrorRecordStore, ExperimentStore, ObservationStore, OutcomeStore, SampleStore, Store } from './store.js';
import { LocalFiles } from './local/local-files.js';
import { LocalCorpusStore } from './local/local-corpus-store.js';
import { LocalSampleStore } from './local/local-sample-store.js';
import { LocalOutcomeStore } from './local/local-outcome-store.js';
import { LocalExperimentStore } from './local/local-experiment-store.js';
import { LocalObservationStore } from './local/local-observation-store.js';
import { LocalConfigReadStore } from './local/local-config-read-store.js';
import { LocalErrorRecordStore } from './local/local-error-record-store.js';

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
