/**
 * What a service embeds: it polls the controller for its assigned level and
 * enforces max(local level, assigned level) (HiLO §3.6). When the controller
 * is unreachable, or its answer is older than `staleAfterMs`, the service
 * keeps its own local level: coordination is lost, availability is not.
 * Also reports the service's load-factor, best effort.
 */
import { request } from 'undici';
import type { Clock } from '../core/clock.js';
import { UpstreamError } from '../core/errors.js';

export interface LatticeClientOptions {
  readonly controllerUrl: string;
  readonly service: string;
  readonly scenario?: string;
  readonly priority?: string;
  /** The level the service chooses for itself (its service-local policy). */
  readonly localLevel: () => number;
  readonly clock: Clock;
  /** @default 1000 */
  readonly pollIntervalMs?: number;
  /** An assignment older than this is ignored. @default 3 × pollIntervalMs */
  readonly staleAfterMs?: number;
  /** @default 500 */
  readonly timeoutMs?: number;
}

export class LatticeClient {
  readonly #options: LatticeClientOptions;
  #assigned: { level: number; atMs: number } | undefined;
  #stop = new AbortController();
  #loop: Promise<void> | undefined;
  failures = 0;

  constructor(options: LatticeClientOptions) {
    this.#options = options;
  }

  /** The controller's assignment while it is fresh; undefined when it is stale or there was none. */
  assignedLevel(): number | undefined {
    const assigned = this.#assigned;
    const staleAfter = this.#options.staleAfterMs ?? 3 * (this.#options.pollIntervalMs ?? 1_000);
    return assigned && this.#options.clock.now() - assigned.atMs <= staleAfter ? assigned.level : undefined;
  }

  /** The level to enforce now. */
  level(): number {
    const local = this.#options.localLevel();
    const assigned = this.#assigned;
    const staleAfter = this.#options.staleAfterMs ?? 3 * (this.#options.pollIntervalMs ?? 1_000);
    if (!assigned || this.#options.clock.now() - assigned.atMs > staleAfter) return local;
    return Math.max(local, assigned.level);
  }

  /** Ask the controller once; false when it could not be reached (the previous assignment then ages out). */
  async poll(): Promise<boolean> {
    const query = new URLSearchParams({
      ...(this.#options.scenario ? { scenario: this.#options.scenario } : {}),
      ...(this.#options.priority ? { priority: this.#options.priority } : {}),
    });
    try {
      const timeout = this.#options.timeoutMs ?? 500;
      const response = await request(`${this.#options.controllerUrl}/levels?${query}`, { headersTimeout: timeout, bodyTimeout: timeout });
      const body = (await response.body.json()) as { levels?: Record<string, number> };
      const level = body.levels?.[this.#options.service];
      if (response.statusCode !== 200 || typeof level !== 'number') throw new UpstreamError(`status ${response.statusCode}`);
      this.#assigned = { level, atMs: this.#options.clock.now() };
      return true;
    } catch {
      this.failures++;
      return false;
    }
  }

  async reportLoadFactor(value: number): Promise<boolean> {
    try {
      const response = await request(`${this.#options.controllerUrl}/load-factor`, {
        method: 'POST',
        body: JSON.stringify({ service: this.#options.service, value }),
        headers: { 'content-type': 'application/json' },
        headersTimeout: 500,
        bodyTimeout: 500,
      });
      await response.body.dump();
      return response.statusCode === 202;
    } catch {
      return false;
    }
  }

  start(): void {
    if (this.#loop) return;
    this.#stop = new AbortController();
    const signal = this.#stop.signal;
    this.#loop = (async () => {
      while (!signal.aborted) {
        await this.poll();
        try {
          await this.#options.clock.sleep(this.#options.pollIntervalMs ?? 1_000, signal);
        } catch {
          return;
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
    this.#loop = undefined;
  }
}
