/**
 * Connections to the queue's Redis, made in one place so that a Redis that is down is one clear error within
 * seconds, never a command that waits forever while ioredis prints a stack trace per reconnect:
 * - a command first asks whether Redis answers at all (assertRedisReachable), within REACH_TIMEOUT_MS;
 * - a client connection's commands fail after a few reconnect attempts instead of queueing forever;
 * - a worker's blocking connection waits (BullMQ requires it: maxRetriesPerRequest null) and says once that it
 *   lost Redis, not once per attempt.
 */
import { Redis } from 'ioredis';
import { QueueError } from '../core/index.js';

/** How long a command waits for Redis to answer before saying it is down. */
export const REACH_TIMEOUT_MS = 3_000;

/** The URL without its password, for messages. */
export function shownRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.href;
  } catch {
    return '(an unreadable Redis URL)';
  }
}

const codeOf = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? (error as Error).message.split('\n')[0]!.slice(0, 120);

/** Resolves once Redis at `url` answers PING; a QueueError naming the server and what to check otherwise. */
export async function assertRedisReachable(url: string, timeoutMs = REACH_TIMEOUT_MS): Promise<void> {
  const probe = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  let last: unknown;
  probe.on('error', (error) => (last = error));
  try {
    await probe.connect();
    await probe.ping();
  } catch (error) {
    throw new QueueError(`cannot reach Redis at ${shownRedisUrl(url)}: ${codeOf(last ?? error)}`, {
      cause: error,
      hint: 'start redis-server there, or fix queue.redisUrl in the config',
    });
  } finally {
    probe.disconnect();
  }
}

export type RedisRole = 'client' | 'blocking';

/**
 * A connection for `role`: a client's commands reject after a few reconnect attempts (the caller's error says
 * Redis went away); a blocking one (BullMQ's worker) waits for Redis to come back. `onLost` hears once per outage.
 */
export function redisConnection(url: string, role: RedisRole, onLost?: (message: string) => void): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: role === 'blocking' ? null : 2, connectTimeout: REACH_TIMEOUT_MS });
  let lost = false;
  redis.on('error', (error) => {
    if (lost) return;
    lost = true;
    onLost?.(`lost Redis at ${shownRedisUrl(url)} (${codeOf(error)}); reconnecting`);
  });
  redis.on('ready', () => (lost = false));
  return redis;
}
