/**
 * Degradation levels of the example services (HiLO Table 1 style) and the
 * rule that picks the level in force: the most degraded of the service's own
 * local level, the level assigned by a controller, and the level a
 * test-scenario header asks for on one request.
 */

/** Ranking: fewer multi-queries first, then fewer documents scored. */
export const RANKING_LEVELS = [
  { multiQueries: 3, docsShare: 1 },
  { multiQueries: 2, docsShare: 1 },
  { multiQueries: 1, docsShare: 1 },
  { multiQueries: 1, docsShare: 0.4 },
  { multiQueries: 1, docsShare: 0.2 },
  { multiQueries: 1, docsShare: 0.1 },
] as const;

/** Prediction: fewer model layers. */
export const PREDICTION_LEVELS = [{ layers: 4 }, { layers: 3 }, { layers: 2 }, { layers: 1 }] as const;

/** Highest level of each service that has levels. */
export const MAX_LEVEL: Readonly<Record<string, number>> = {
  ranking: RANKING_LEVELS.length - 1,
  prediction: PREDICTION_LEVELS.length - 1,
};

/**
 * Per-request test-scenario header (HiLO's test hooks): `ranking=2,prediction=1`.
 * Services propagate it downstream, so a tagged request is degraded end to end
 * while untagged traffic is not.
 */
export const LEVELS_HEADER = 'x-tandem-levels';

/** Parse the levels header; unknown services and malformed parts are ignored. */
export function parseLevelsHeader(value: string | undefined): Record<string, number> {
  const levels: Record<string, number> = {};
  if (!value) return levels;
  for (const part of value.split(',')) {
    const match = /^\s*([a-z][a-z0-9-]*)\s*=\s*(\d{1,2})\s*$/.exec(part);
    if (match) levels[match[1]!] = Number(match[2]);
  }
  return levels;
}

/** Thresholds of load-factor at which a service degrades itself, one per level above 0. */
export const DEFAULT_LOCAL_THRESHOLDS = [1.0, 1.2, 1.4, 1.6, 1.8] as const;

/** The level state of one service. */
export class ServiceLevels {
  #assigned = 0;

  constructor(
    readonly service: string,
    readonly maxLevel: number,
    readonly localThresholds: readonly number[] = DEFAULT_LOCAL_THRESHOLDS,
  ) {}

  get assigned(): number {
    return this.#assigned;
  }

  /** Set by a controller; clamped to the service's range. */
  assign(level: number): void {
    this.#assigned = this.#clamp(level);
  }

  /** The service's own level from its load-factor. */
  local(loadFactor: number): number {
    let level = 0;
    for (const threshold of this.localThresholds) if (loadFactor >= threshold) level++;
    return this.#clamp(level);
  }

  /** max(local, assigned, requested by header). */
  inForce(loadFactor: number, requested: Record<string, number>): number {
    return this.#clamp(Math.max(this.local(loadFactor), this.#assigned, requested[this.service] ?? 0));
  }

  #clamp(level: number): number {
    return Math.max(0, Math.min(this.maxLevel, Math.floor(level)));
  }
}
