/** The local backend's detector checks: one NDJSON file per experiment. */
import { join } from 'node:path';
import type { DetectorObservation } from '../../core/index.js';
import type { ObservationStore, ReadOptions } from '../store.js';
import { assertName } from '../names.js';
import { isDetectorObservation } from '../record-guards.js';
import type { LocalFiles } from './local-files.js';
import { appendGrouped } from './day-files.js';
import { readJsonLines } from './ndjson-file.js';

export class LocalObservationStore implements ObservationStore {
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
