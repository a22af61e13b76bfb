/**
 * Storage: interfaces, the two backends, and the one place that picks a
 * backend from the config.
 */
import { resolve } from 'node:path';
import { ConfigError, type StoreConfig } from '../core/index.js';
import type { Store } from './store.js';
import { createLocalStore } from './local-store.js';
import { createClickHouseStore } from './clickhouse-store.js';

export type {
  Store,
  CorpusStore,
  SampleStore,
  OutcomeStore,
  OutcomeAggregate,
  OutcomeFields,
  ExperimentStore,
  ObservationStore,
  ConfigReadStore,
  ErrorRecordStore,
  ReadOptions,
  CorpusTierSummary,
  ConfigReadSummary,
} from './store.js';
export type { ErrorRecordFilter } from './filters.js';
export { summarize as summarizeExperiment, changeOf, type ExperimentQuery, type ExperimentSummary } from './experiment-query.js';
export { LocalStore, createLocalStore, type LocalStoreOptions } from './local-store.js';
export { ClickHouseStore, createClickHouseStore, type ClickHouseStoreOptions } from './clickhouse-store.js';
export { sql, ident, qualified, literal, quoteString, joinSql, SqlFragment, type SqlValue } from './sql.js';
export { assertName } from './names.js';
export { OutcomeAggregator } from './outcome-aggregates.js';
export { writeFileAtomic } from './local/atomic-file.js';

/** Build the configured backend. Relative local dirs resolve against `cwd`. */
export function createStore(config: StoreConfig, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Store {
  switch (config.kind) {
    case 'local': {
      const cwd = options.cwd ?? process.cwd();
      return createLocalStore({ dir: resolve(cwd, config.dir) });
    }
    case 'clickhouse': {
      const env = options.env ?? process.env;
      let password = '';
      if (config.passwordEnv !== undefined) {
        const value = env[config.passwordEnv];
        if (value === undefined) throw new ConfigError([`store.passwordEnv names ${config.passwordEnv}, which is not set in the environment`]);
        password = value;
      }
      return createClickHouseStore({
        url: config.url,
        database: config.database,
        username: config.username,
        password,
        requestTimeoutMs: config.requestTimeout,
        batchRows: config.batchRows,
      });
    }
  }
}
