/**
 * Building outcome aggregates from outcomes one at a time: what the local
 * store does while streaming a trial's file, and the reference the ClickHouse
 * store's SQL is tested against (the same numbers, test/store/store-contract.ts).
 */
import { latencyBucket, type RequestOutcome } from '../core/index.js';
import type { OutcomeAggregate } from './store.js';

interface Accumulating {
  trial: number;
  attempt: number;
  arm: string;
  count: number;
  latencySumMs: number;
  latencyMinMs: number;
  latencyMaxMs: number;
  bytesSum: number;
  errors: Record<string, number>;
  latencyBuckets: Record<string, number>;
}

export class OutcomeAggregator {
  readonly #groups = new Map<string, Accumulating>();

  add(o: RequestOutcome): void {
    const key = `${o.trial}\u0000${o.attempt}\u0000${o.arm}`;
    let group = this.#groups.get(key);
    if (!group) {
      group = { trial: o.trial, attempt: o.attempt, arm: o.arm, count: 0, latencySumMs: 0, latencyMinMs: Number.POSITIVE_INFINITY, latencyMaxMs: Number.NEGATIVE_INFINITY, bytesSum: 0, errors: {}, latencyBuckets: {} };
      this.#groups.set(key, group);
    }
    group.count++;
    group.latencySumMs += o.latencyMs;
    group.latencyMinMs = Math.min(group.latencyMinMs, o.latencyMs);
    group.latencyMaxMs = Math.max(group.latencyMaxMs, o.latencyMs);
    group.bytesSum += o.bytes;
    if (o.errorClass !== '') group.errors[o.errorClass] = (group.errors[o.errorClass] ?? 0) + 1;
    const bucket = latencyBucket(o.latencyMs);
    group.latencyBuckets[bucket] = (group.latencyBuckets[bucket] ?? 0) + 1;
  }

  /** Ordered by trial, attempt, arm (the contract's order). */
  aggregates(): OutcomeAggregate[] {
    return [...this.#groups.values()].sort((a, b) => a.trial - b.trial || a.attempt - b.attempt || (a.arm < b.arm ? -1 : a.arm > b.arm ? 1 : 0));
  }
}
