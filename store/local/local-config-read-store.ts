/** The local backend's config consumption index: one NDJSON file per day. */
import type { ConfigRead } from '../../core/index.js';
import type { ConfigReadStore, ConfigReadSummary, ReadOptions } from '../store.js';
import { latestConfigReads } from '../filters.js';
import { isConfigRead } from '../record-guards.js';
import type { LocalFiles } from './local-files.js';
import { appendGrouped, dayName, readDays } from './day-files.js';

export class LocalConfigReadStore implements ConfigReadStore {
  constructor(readonly files: LocalFiles) {}

  append(reads: readonly ConfigRead[]): Promise<void> {
    return appendGrouped(this.files, 'config-reads', reads, (r) => `${dayName(r.timeMs)}.ndjson`);
  }

  async latest(filter: { sinceMs: number; service?: string; file?: string }, options: ReadOptions = {}): Promise<ConfigReadSummary[]> {
    return latestConfigReads(readDays(this.files, 'config-reads', filter.sinceMs, isConfigRead, options), filter);
  }
}
