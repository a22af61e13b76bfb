/**
 * A fixed throughput, in units of work per second, served first come first
 * served: what a dependency bound by disk, memory bandwidth or a licensed
 * quota looks like from outside. A request's units occupy the server for
 * `units / unitsPerSecond`; when more arrives than it can serve, requests
 * queue and their wait grows until callers' deadlines expire (HiLO's
 * overload). Work already queued is served even if its caller gave up, as a
 * real server wastes it. The example stack uses it so capacity tests tell the
 * same story on a fast workstation and on a busy 2-core CI machine.
 */
import type { Clock } from '../../core/clock.js';

export class ThroughputLimit {
  #freeAtMs = 0;

  constructor(
    readonly unitsPerSecond: number,
    readonly clock: Clock,
  ) {
    if (!(unitsPerSecond > 0) || !Number.isFinite(unitsPerSecond))
      throw new RangeError(`a throughput limit must be a positive number of units per second, got ${unitsPerSecond}`);
  }

  /** How long `units` keep the server busy, in ms. */
  serviceMs(units: number): number {
    return (Math.max(0, units) / this.unitsPerSecond) * 1000;
  }

  /**
   * Queue `units` and resolve when they have been served. `onReserve` gets the
   * service time at once (the work is committed whether or not the caller waits).
   */
  async occupy(units: number, onReserve?: (serviceMs: number) => void): Promise<void> {
    const now = this.clock.monotonic();
    const serviceMs = this.serviceMs(units);
    this.#freeAtMs = Math.max(now, this.#freeAtMs) + serviceMs;
    onReserve?.(serviceMs);
    const waitMs = this.#freeAtMs - now;
    if (waitMs >= 1) await this.clock.sleep(Math.round(waitMs));
  }
}
