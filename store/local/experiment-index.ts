/**
 * The local store's summary index of experiments, so a listing of 10,000
 * experiments reads one small file instead of 10,000 records.
 *
 * `experiments/summaries.ndjson` gets a line whenever a record's summary
 * (status, outcome…) changes, not on every put: a running experiment is put
 * at every trial event, and its summary changes a handful of times. The
 * latest line per id wins (by `updatedAtMs`, then file order). A long-lived
 * reader (`tandem serve`) tails the file from where it stopped.
 *
 * The record files stay the truth: records the index does not name (written
 * by an older Tandem, or by a process killed between its two writes) are read
 * from their files and added, and a listing reads each record it returns
 * from its file, so what it shows is exact even when a summary line was lost.
 */
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExperimentRecord } from '../../core/index.js';
import { experimentRecordOf } from '../record-guards.js';
import { summarize, type ExperimentSummary } from '../experiment-query.js';
import { appendLines } from './ndjson-file.js';
import type { LocalFiles } from './local-files.js';

export const SUMMARIES_FILE = 'summaries.ndjson';

const RECORD_SUFFIX = '.json';

const isSummary = (value: unknown): value is ExperimentSummary => {
  if (value === null || typeof value !== 'object') return false;
  const s = value as Record<string, unknown>;
  return (
    typeof s.id === 'string' &&
    typeof s.workload === 'string' &&
    typeof s.status === 'string' &&
    typeof s.createdAtMs === 'number' &&
    typeof s.updatedAtMs === 'number' &&
    ['kind', 'stage', 'change', 'outcome'].every((k) => typeof s[k] === 'string')
  );
};

const keyOf = (s: ExperimentSummary): string => JSON.stringify([s.workload, s.status, s.kind, s.stage, s.change, s.outcome, s.createdAtMs]);

export class ExperimentIndex {
  readonly #summaries = new Map<string, ExperimentSummary>();
  /** What this process last wrote per id, so an unchanged summary is not written again. */
  readonly #written = new Map<string, string>();
  /** Bytes of the index file already read. */
  #offset = 0;
  /** The refresh in progress (two tails at once would both advance the offset), and the one queued after it. */
  #refreshing: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

  constructor(readonly files: LocalFiles) {}

  get #path(): string {
    return join(this.files.dir, 'experiments', SUMMARIES_FILE);
  }

  /** Called after a record was written. */
  async recordPut(record: ExperimentRecord): Promise<void> {
    const summary = summarize(record);
    const key = keyOf(summary);
    if (this.#written.get(record.id) === key) return;
    await appendLines(this.#path, [JSON.stringify(summary)]);
    this.#written.set(record.id, key);
  }

  /** Every experiment's summary, current with the index file and the record files on disk. */
  async all(): Promise<ExperimentSummary[]> {
    await this.#refreshOnce();
    return [...this.#summaries.values()];
  }

  /**
   * One refresh at a time. A caller that arrives while one runs waits for the next, which starts after it
   * (that one may have read the file before this caller's own write); callers arriving meanwhile share it.
   */
  #refreshOnce(): Promise<void> {
    if (!this.#refreshing) {
      this.#refreshing = this.#refresh().finally(() => (this.#refreshing = undefined));
      return this.#refreshing;
    }
    this.#queued ??= this.#refreshing
      .catch(() => undefined)
      .then(() => {
        this.#queued = undefined;
        return this.#refreshOnce();
      });
    return this.#queued;
  }

  async #refresh(): Promise<void> {
    await this.#tail();
    const ids = new Set(
      (await this.files.list('experiments')).filter((name) => name.endsWith(RECORD_SUFFIX)).map((name) => name.slice(0, -RECORD_SUFFIX.length)),
    );
    for (const id of this.#summaries.keys()) if (!ids.has(id)) this.#summaries.delete(id);
    const missing = [...ids].filter((id) => !this.#summaries.has(id));
    for (const id of missing) {
      const record = await this.#readRecord(id);
      if (record === undefined) continue;
      this.#merge(summarize(record));
      // Written back so the next reader need not open the record again.
      await this.recordPut(record);
    }
  }

  async #readRecord(id: string): Promise<ExperimentRecord | undefined> {
    try {
      const value: unknown = JSON.parse(await readFile(join(this.files.dir, 'experiments', `${id}${RECORD_SUFFIX}`), 'utf8'));
      return experimentRecordOf(value);
    } catch {
      return undefined; // removed, replaced or corrupt: `get` reports a corrupt record where one is asked for
    }
  }

  #merge(summary: ExperimentSummary): void {
    const known = this.#summaries.get(summary.id);
    if (known === undefined || known.updatedAtMs <= summary.updatedAtMs) this.#summaries.set(summary.id, summary);
  }

  /** Read the lines appended since the last read; a torn last line waits until it is whole. */
  async #tail(): Promise<void> {
    let handle;
    try {
      handle = await open(this.#path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw this.files.wrap(`read ${this.#path}`, error);
    }
    try {
      const { size } = await handle.stat();
      if (size < this.#offset) {
        // Replaced by a shorter file (restored from a backup): read it again from the start.
        this.#offset = 0;
        this.#summaries.clear();
      }
      if (size === this.#offset) return;
      const buffer = Buffer.alloc(size - this.#offset);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.#offset);
      const end = buffer.lastIndexOf(0x0a, bytesRead - 1);
      if (end < 0) return;
      for (const line of buffer.subarray(0, end).toString('utf8').split('\n')) {
        if (line === '') continue;
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          continue; // a torn line from a killed writer; the record file is read instead
        }
        if (isSummary(value)) this.#merge(value);
      }
      this.#offset += end + 1;
    } finally {
      await handle.close();
    }
  }
}
