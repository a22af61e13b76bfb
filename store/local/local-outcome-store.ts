/** The local backend's per-request outcomes of replays. */
import { join } from 'node:path';
import type { RequestOutcome } from '../../core/index.js';
import type { OutcomeAggregate, OutcomeFields, OutcomeStore, ReadOptions } from '../store.js';
import { assertName } from '../names.js';
import { OutcomeAggregator } from '../outcome-aggregates.js';
import { isRequestOutcome } from '../record-guards.js';
import type { LocalFiles } from './local-files.js';
import { appendGrouped } from './day-files.js';
import { readJsonLines } from './ndjson-file.js';

/** One file per trial, so a read sorts one trial at a time in memory, never a whole experiment. */
export class LocalOutcomeStore implements OutcomeStore {
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
