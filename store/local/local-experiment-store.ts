/** The local backend's experiment records (JSON, written atomically) and their event logs (NDJSON). */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError, errorMessage, type ExperimentEvent, type ExperimentRecord } from '../../core/index.js';
import type { ExperimentStore, ReadOptions } from '../store.js';
import { assertName } from '../names.js';
import { matchesQuery, newestFirst, pageOf, type ExperimentQuery, type ExperimentSummary } from '../experiment-query.js';
import { experimentRecordOf, isExperimentEvent } from '../record-guards.js';
import { ExperimentIndex } from './experiment-index.js';
import type { LocalFiles } from './local-files.js';
import { appendLines, readJsonLines } from './ndjson-file.js';
import { writeFileAtomic } from './atomic-file.js';

export class LocalExperimentStore implements ExperimentStore {
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
