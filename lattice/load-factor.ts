/**
 * Product load-factor (HiLO §3.1): each service reports a normalized,
 * monotone load-factor; per service a reservoir sample over the window
 * damps noise and short spikes (the service's value is the sample's median);
 * the product load-factor is the configured aggregate across services.
 */
import type { Clock, LatticeConfig } from '../core/index.js';
import { quantileOf } from '../harness/index.js';
import { Reservoir } from './reservoir.js';
import { InputError } from '../core/index.js';

interface Report {
  readonly value: number;
  readonly timeMs: number;
}

export class LoadFactors {
  readonly #lattice: LatticeConfig;
  readonly #clock: Clock;
  readonly #reservoirs = new Map<string, Reservoir<Report>>();

  constructor(lattice: LatticeConfig, clock: Clock) {
    this.#lattice = lattice;
    this.#clock = clock;
  }

  /**
   * Why a report would be refused, or undefined when it is valid: a service
   * not in the lattice (an own property: `constructor` or `__proto__` are not
   * services), a value outside [0, 10] or not finite (a load-factor is normalized).
   */
  problem(service: unknown, value: unknown): string | undefined {
    if (typeof service !== 'string' || typeof value !== 'number') return 'needs "service" (string) and "value" (number)';
    if (!Object.hasOwn(this.#lattice.services, service)) return `service ${JSON.stringify(service.slice(0, 100))} is not in lattice ${this.#lattice.name}`;
    if (!Number.isFinite(value) || value < 0 || value > 10) return `load-factor of ${service} must be a number in [0, 10], got ${value}`;
    return undefined;
  }

  /** Record a report; an invalid one (see `problem`) throws a RangeError. */
  report(service: string, value: number): void {
    const problem = this.problem(service, value);
    if (problem !== undefined) throw new InputError(problem);
    let reservoir = this.#reservoirs.get(service);
    if (!reservoir)
      this.#reservoirs.set(
        service,
        (reservoir = new Reservoir<Report>(this.#lattice.reservoirSize, [...service].reduce((h, c) => h * 31 + c.charCodeAt(0), 7) >>> 0)),
      );
    reservoir.add({ value, timeMs: this.#clock.now() });
  }

  /** Each service's damped load-factor (median of its reservoir within the window); services without reports are absent. */
  perService(): Map<string, number> {
    const since = this.#clock.now() - this.#lattice.window;
    const values = new Map<string, number>();
    for (const [service, reservoir] of this.#reservoirs) {
      reservoir.retain((r) => r.timeMs >= since);
      if (reservoir.items.length > 0)
        values.set(
          service,
          quantileOf(
            reservoir.items.map((r) => r.value),
            0.5,
          ),
        );
    }
    return values;
  }

  /** The product load-factor; undefined without any report in the window. */
  product(perService = this.perService()): number | undefined {
    const values = [...perService.values()];
    if (values.length === 0) return undefined;
    const aggregate = this.#lattice.aggregate;
    if (aggregate === 'max') return Math.max(...values);
    if ('quantile' in aggregate) return quantileOf(values, aggregate.quantile);
    let weight = 0;
    let sum = 0;
    for (const [service, value] of perService) {
      const w = Object.hasOwn(aggregate.weighted, service) ? aggregate.weighted[service]! : 0;
      weight += w;
      sum += w * value;
    }
    return weight > 0 ? sum / weight : Math.max(...values);
  }
}
