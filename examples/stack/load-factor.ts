/**
 * A service's load-factor: the share of the last second it spent computing,
 * relative to a target utilization, so 1.0 means "at the load it should not
 * exceed" and values above 1 mean overload (HiLO §3.1: normalized, monotone).
 * The example services are single-threaded, so busy time is CPU time.
 */
import type { Clock } from '../../core/clock.js';

/** Utilization that counts as load-factor 1.0 unless a service sets its own. */
export const DEFAULT_TARGET_UTILIZATION = 0.7;
const BUCKET_MS = 100;
const BUCKETS = 10;

export class LoadFactor {
  readonly #busyMs = new Float64Array(BUCKETS);
  readonly #bucketStart = new Float64Array(BUCKETS).fill(-1);
  #totalSeconds = 0;

  constructor(
    readonly clock: Clock,
    /** Utilization that counts as load-factor 1.0. @default 0.7 */
    readonly targetUtilization = DEFAULT_TARGET_UTILIZATION,
  ) {}

  /** Add time spent computing, ending now. */
  addBusy(ms: number): void {
    const now = this.clock.now();
    const start = Math.floor(now / BUCKET_MS) * BUCKET_MS;
    const index = (start / BUCKET_MS) % BUCKETS;
    if (this.#bucketStart[index] !== start) {
      this.#bucketStart[index] = start;
      this.#busyMs[index] = 0;
    }
    this.#busyMs[index] = this.#busyMs[index]! + ms;
    this.#totalSeconds += ms / 1000;
  }

  /** Busy seconds since start (the `compute_seconds_total` counter). */
  get totalSeconds(): number {
    return this.#totalSeconds;
  }

  /** Load-factor over the last second. */
  value(): number {
    const now = this.clock.now();
    let busy = 0;
    for (let i = 0; i < BUCKETS; i++) {
      if (now - this.#bucketStart[i]! < BUCKET_MS * BUCKETS) busy += this.#busyMs[i]!;
    }
    return busy / (BUCKET_MS * BUCKETS) / this.targetUtilization;
  }
}
