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

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const results = await Promise.allSettled([startClickHouse(), startRedis()]);
  const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) {
    await Promise.all(started.map((service) => service.stop()));
    throw failure.reason;
  }
  const [clickhouse, redis] = started as [PrivateService, PrivateService];
  project.provide('clickhouseUrl', clickhouse.url);
  project.provide('redisUrl', redis.url);
  return async () => {
    await Promise.all(started.map((service) => service.stop()));
  };
}
