/** The local backend's dependency error records: one NDJSON file per day. */
import type { DependencyErrorRecord } from '../../core/index.js';
import type { ErrorRecordStore, ReadOptions } from '../store.js';
import { matchesErrorFilter, type ErrorRecordFilter } from '../filters.js';
import { isDependencyErrorRecord } from '../record-guards.js';
import type { LocalFiles } from './local-files.js';
import { appendGrouped, dayName, readDays } from './day-files.js';

export class LocalErrorRecordStore implements ErrorRecordStore {
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
