/**
 * The lattice controller (HiLO §3.6): every decision period it reads the
 * product load-factor and picks the state whose threshold it crosses.
 * Escalation is immediate and may jump several states; recovery goes one
 * state at a time, and only after `recoveryDamping` decisions in a row below
 * the current state's `recoverBelow` (hysteresis), so a steady load just
 * above a threshold never oscillates. Without any load report the state is
 * held. It publishes, per scenario and request priority, each service's
 * assigned level; every decision is handed to `onDecision` to be stored.
 */
import type { Clock, LatticeConfig } from '../core/index.js';
import type { LoadFactors } from './load-factor.js';

export type Transition = 'escalate' | 'recover' | 'hold';

export interface Decision {
  readonly lattice: string;
  readonly timeMs: number;
  /** null when no service reported within the window. */
  readonly productLoadFactor: number | null;
  readonly perService: Readonly<Record<string, number>>;
  readonly previous: string;
  readonly state: string;
  readonly stateIndex: number;
  readonly transition: Transition;
  /** Scenario → priority ("default" for traffic without one) → service → level. */
  readonly levels: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, number>>>>>>;
}

export interface ControllerOptions {
  readonly lattice: LatticeConfig;
  readonly loadFactors: LoadFactors;
  readonly clock: Clock;
  readonly onDecision?: (decision: Decision) => void | Promise<void>;
}

export class LatticeController {
  readonly #options: ControllerOptions;
  #index = 0;
  #belowCount = 0;
  #last: Decision | undefined;

  constructor(options: ControllerOptions) {
    this.#options = options;
  }

  get state(): string {
    return this.#options.lattice.states[this.#index]!.name;
  }

  get lastDecision(): Decision | undefined {
    return this.#last;
  }

  /** The state index a priority's traffic gets: its offset further along, once degradation has started. */
  #indexFor(priorityOffset: number): number {
    return this.#index === 0 ? 0 : Math.min(this.#options.lattice.states.length - 1, this.#index + priorityOffset);
  }

  /** Assigned levels of every service for a scenario and request priority. */
  levels(priority?: string): Record<string, number> {
    const offset = this.#options.lattice.priorities.find((p) => p.name === priority)?.offset ?? 0;
    return { ...this.#options.lattice.states[this.#indexFor(offset)]!.levels };
  }

  /** One decision, now. */
  async decide(): Promise<Decision> {
    const { lattice, loadFactors, clock } = this.#options;
    const perService = loadFactors.perService();
    const product = loadFactors.product(perService);
    const previous = this.#index;
    let transition: Transition = 'hold';
    if (product !== undefined) {
      let target = 0;
      lattice.states.forEach((s, i) => {
        if (product >= s.threshold) target = i;
      });
      if (target > this.#index) {
        this.#index = target;
        this.#belowCount = 0;
        transition = 'escalate';
      } else if (this.#index > 0) {
        const current = lattice.states[this.#index]!;
        const recoverBelow = current.recoverBelow ?? current.threshold * 0.9;
        if (product < recoverBelow) {
          if (++this.#belowCount >= lattice.recoveryDamping) {
            this.#index--;
            this.#belowCount = 0;
            transition = 'recover';
          }
        } else this.#belowCount = 0;
      }
    }
    const byPriority: Record<string, Record<string, number>> = { default: this.levels() };
    for (const p of lattice.priorities) byPriority[p.name] = this.levels(p.name);
    const decision: Decision = {
      lattice: lattice.name,
      timeMs: clock.now(),
      productLoadFactor: product ?? null,
      perService: Object.fromEntries(perService),
      previous: lattice.states[previous]!.name,
      state: this.state,
      stateIndex: this.#index,
      transition,
      levels: Object.fromEntries(lattice.scenarios.map((scenario) => [scenario, byPriority])),
    };
    this.#last = decision;
    await this.#options.onDecision?.(decision);
    return decision;
  }

  /** Decide every decision period until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.#options.clock.sleep(this.#options.lattice.decisionPeriod, signal);
      } catch {
        return;
      }
      await this.decide();
    }
  }
}
