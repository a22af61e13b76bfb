/**
 * Building outcome aggregates: from outcomes one at a time (what the local
 * store does while streaming a trial's file) or from partial aggregates
 * (ClickHouse's GROUP BY rows, a report merging trials). One accumulator, so
 * every place adds counts, sums, extremes, classes and buckets the same way;
 * the contract test holds the two stores to it (test/store/store-contract.ts).
 */
import { latencyBucket, type RequestOutcome } from '../core/index.js';
import type { OutcomeAggregate } from './store.js';

type Accumulating = { -readonly [K in keyof OutcomeAggregate]: K extends 'errors' | 'latencyBuckets' ? Record<string, number> : OutcomeAggregate[K] };

export class OutcomeAggregator {
  readonly #groups = new Map<string, Accumulating>();

  #group(trial: number, attempt: number, arm: string): Accumulating {
    const key = `${trial}\u0000${attempt}\u0000${arm}`;
    let group = this.#groups.get(key);
    if (!group) {
      group = {
        trial,
        attempt,
        arm,
        count: 0,
        latencySumMs: 0,
        latencyMinMs: Number.POSITIVE_INFINITY,
        latencyMaxMs: Number.NEGATIVE_INFINITY,
        bytesSum: 0,
        errors: {},
        latencyBuckets: {},
      };
      this.#groups.set(key, group);
    }
    return group;
  }

  /** One outcome. */
  add(o: RequestOutcome): void {
    const group = this.#group(o.trial, o.attempt, o.arm);
    group.count++;
    group.latencySumMs += o.latencyMs;
    group.latencyMinMs = Math.min(group.latencyMinMs, o.latencyMs);
    group.latencyMaxMs = Math.max(group.latencyMaxMs, o.latencyMs);
    group.bytesSum += o.bytes;
    if (o.errorClass !== '') group.errors[o.errorClass] = (group.errors[o.errorClass] ?? 0) + 1;
    const bucket = latencyBucket(o.latencyMs);
    group.latencyBuckets[bucket] = (group.latencyBuckets[bucket] ?? 0) + 1;
  }

  /** A partial aggregate, added into the group of its trial, attempt and arm. */
  merge(a: OutcomeAggregate): void {
    const group = this.#group(a.trial, a.attempt, a.arm);
    group.count += a.count;
    group.latencySumMs += a.latencySumMs;
    group.latencyMinMs = Math.min(group.latencyMinMs, a.latencyMinMs);
    group.latencyMaxMs = Math.max(group.latencyMaxMs, a.latencyMaxMs);
    group.bytesSum += a.bytesSum;
    for (const [errorClass, count] of Object.entries(a.errors)) group.errors[errorClass] = (group.errors[errorClass] ?? 0) + count;
    for (const [bucket, count] of Object.entries(a.latencyBuckets)) group.latencyBuckets[bucket] = (group.latencyBuckets[bucket] ?? 0) + count;
  }

  /** Ordered by trial, attempt, arm (the contract's order). */
  aggregates(): OutcomeAggregate[] {
    return [...this.#groups.values()].sort((a, b) => a.trial - b.trial || a.attempt - b.attempt || (a.arm < b.arm ? -1 : a.arm > b.arm ? 1 : 0));
  }
}
