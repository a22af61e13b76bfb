/**
 * Where a dependency call of an experiment may go (FIRE §4): the isolated
 * replica, a pinned subset of shards, or the shared dependency. Pure choices,
 * so they can be tested without a network.
 */
import { seededRandom, type DependencyConfig } from '../core/index.js';
import { normalizedPath, underPrefix } from './request-path.js';

/**
 * The shards an experiment may use: the explicit `pinned` list, or `pin`
 * shards chosen by a seeded shuffle, so the same experiment always gets the
 * same shards and different experiments spread over the tier.
 */
export function pinnedShards(shards: readonly string[], pin: number, seed: number): string[] {
  const order = [...shards];
  const random = seededRandom(seed);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order.slice(0, Math.max(1, Math.min(pin, shards.length)));
}

/** The targets a dependency's calls may reach, in the order they are tried. */
export function allowedTargets(dependency: DependencyConfig, seed: number): string[] {
  switch (dependency.policy) {
    case 'isolated':
    case 'shared':
      return [dependency.target];
    case 'pinned':
      return dependency.pinned ? [...dependency.pinned] : pinnedShards(dependency.shards, dependency.pin ?? 1, seed);
  }
}

/** RFC 9110 §9.2.1: the safe methods. Every other method is a write, whatever the server does with it. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);
/** Headers and a query parameter through which clients and frameworks tunnel another method. */
export const METHOD_OVERRIDE_HEADERS = ['x-http-method-override', 'x-http-method', 'x-method-override'] as const;

export interface CallToJudge {
  readonly method: string;
  /** Request target as received: path and query. */
  readonly target: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/**
 * Is this call a write? Any method that is not safe, a safe method carrying a
 * method override (header or `_method` query parameter) that names an unsafe
 * one, or a path under one of the dependency's `writePaths` — compared after
 * normalization (request-path.ts). `undefined` path: the caller refuses it.
 */
export function isWrite(dependency: Pick<DependencyConfig, 'writePaths'>, call: CallToJudge, path: string): boolean {
  if (!SAFE_METHODS.has(call.method.toUpperCase())) return true;
  for (const name of METHOD_OVERRIDE_HEADERS) {
    const value = call.headers[name];
    for (const method of Array.isArray(value) ? value : value === undefined ? [] : [value]) if (!SAFE_METHODS.has(method.trim().toUpperCase())) return true;
  }
  const query = call.target.indexOf('?');
  if (query >= 0) {
    for (const [name, value] of new URLSearchParams(call.target.slice(query + 1)))
      if (name.toLowerCase() === '_method' && !SAFE_METHODS.has(value.trim().toUpperCase())) return true;
  }
  return dependency.writePaths.some((prefix) => underPrefix(path, normalizedPath(prefix) ?? prefix.toLowerCase()));
}

/**
 * A W3C baggage header with the experiment's identity added to what the caller sent. Every `tandem.*` key
 * is the router's: the caller's own, in any case (`Tandem.job`), are dropped, never kept ahead of ours.
 */
export function withBaggage(existing: string | undefined, identity: Readonly<Record<string, string>>): string {
  const members = Object.entries(identity).map(([key, value]) => `tandem.${key}=${encodeURIComponent(value)}`);
  const kept = (existing ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '' && !m.split('=', 1)[0]!.trim().toLowerCase().startsWith('tandem.'));
  return [...kept, ...members].join(',');
}
