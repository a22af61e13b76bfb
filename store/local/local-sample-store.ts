/** The local backend's time series: one NDJSON file per experiment. */
import { join } from 'node:path';
import type { Sample } from '../../core/index.js';
import type { ReadOptions, SampleStore } from '../store.js';
import { assertName } from '../names.js';
import { isSample } from '../record-guards.js';
import type { LocalFiles } from './local-files.js';
import { appendGrouped } from './day-files.js';
import { readJsonLines } from './ndjson-file.js';

export class LocalSampleStore implements SampleStore {
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
