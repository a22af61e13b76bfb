/**
 * Where a dependency call of an experiment may go (FIRE §4): the isolated
 * replica, a pinned subset of shards, or the shared dependency. Pure choices,
 * so they can be tested without a network.
 */
import { seededRandom, type DependencyConfig } from '../core/index.js';

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

/** RFC 9110 §9.2.2: the methods that are not idempotent. */
const NON_IDEMPOTENT = new Set(['POST', 'PATCH', 'CONNECT']);

/** Is this call a write under the dependency's rules (a non-idempotent method, or a listed path)? */
export function isWrite(dependency: DependencyConfig, method: string, path: string): boolean {
  if (NON_IDEMPOTENT.has(method.toUpperCase())) return true;
  if (dependency.writePaths.length === 0) return false;
  const question = path.indexOf('?');
  const pathname = question < 0 ? path : path.slice(0, question);
  return dependency.writePaths.some((prefix) => pathname === prefix || pathname.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`));
}

/** A W3C baggage header with the experiment's identity added to what the caller sent. */
export function withBaggage(existing: string | undefined, identity: Readonly<Record<string, string>>): string {
  const members = Object.entries(identity).map(([key, value]) => `tandem.${key}=${encodeURIComponent(value)}`);
  const kept = (existing ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '' && !m.startsWith('tandem.'));
  return [...kept, ...members].join(',');
}
