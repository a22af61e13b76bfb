/**
 * Starts a private clickhouse-server and redis-server for the whole test run
 * and hands their URLs to tests through `inject()`. A missing binary fails the
 * run with one line naming the Debian package, never a silent skip.
 */
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startClickHouse, startRedis, type PrivateService } from '../support/private-services.js';

declare module 'vitest' {
  export interface ProvidedContext {
    clickhouseUrl: string;
    redisUrl: string;
  }
}

/** One pair of servers for every project of a run (integration and e2e both set this file up). */
interface SharedServices {
  readonly started: Promise<readonly [PrivateService, PrivateService]>;
  users: number;
}
const SHARED = Symbol.for('tandem.test.services');
type WithShared = typeof globalThis & { [SHARED]?: SharedServices };

async function startBoth(): Promise<readonly [PrivateService, PrivateService]> {
  const results = await Promise.allSettled([startClickHouse(), startRedis()]);
  const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) {
    await Promise.all(started.map((service) => service.stop()));
    throw failure.reason;
  }
  return started as [PrivateService, PrivateService];
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const holder = globalThis as WithShared;
  const shared = (holder[SHARED] ??= { started: startBoth(), users: 0 });
  shared.users++;
  const [clickhouse, redis] = await shared.started;
  project.provide('clickhouseUrl', clickhouse.url);
  project.provide('redisUrl', redis.url);
  return async () => {
    if (--shared.users > 0) return;
    delete holder[SHARED];
    await Promise.all([clickhouse, redis].map((service) => service.stop()));
  };
}
