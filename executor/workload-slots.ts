/**
 * Per-workload concurrency across workers: a Redis sorted set per workload
 * whose members are the experiments holding a slot, scored by when their
 * hold expires. Holders renew; a worker killed with SIGKILL stops renewing and
 * its slot frees itself, while the worker that resumes the same experiment
 * takes the same slot back.
 */
import type { Redis } from 'ioredis';
import { MAX_TIMER_MS, type Clock } from '../core/index.js';

const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[4]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[4])
  return 1
end
return 0`;

export class WorkloadSlots {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #ttlMs: number;

  readonly #clock: Clock;

  /** Every holder of the same slots must share a time base: the system clock in production. */
  constructor(redis: Redis, prefix: string, clock: Clock, ttlMs = 15_000) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#clock = clock;
    this.#ttlMs = ttlMs;
  }

  #key(workload: string): string {
    return `${this.#prefix}:tandem:slots:${workload}`;
  }

  /** Take (or renew) a slot of `workload` for experiment `id` when fewer than `limit` are held. */
  async acquire(workload: string, id: string, limit: number): Promise<boolean> {
    return (await this.#redis.eval(ACQUIRE, 1, this.#key(workload), this.#clock.now(), this.#ttlMs, limit, id)) === 1;
  }

  async release(workload: string, id: string): Promise<void> {
    await this.#redis.zrem(this.#key(workload), id);
  }

  /** Renew the hold every third of its lifetime until `signal` aborts. */
  hold(workload: string, id: string, limit: number, signal: AbortSignal): void {
    // Capped at Node's longest timer: a longer interval would fire every millisecond.
    const timer = setInterval(() => void this.acquire(workload, id, limit).catch(() => undefined), Math.min(MAX_TIMER_MS, Math.max(1_000, this.#ttlMs / 3)));
    signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  }
}
