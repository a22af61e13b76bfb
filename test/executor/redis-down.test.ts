/**
 * Issue 70, finding 5: with Redis down, `tandem cancel` never returned — 129 raw ioredis ECONNREFUSED stack traces in
 * 20 s, no message of its own, deaf to SIGTERM — and `submit --wait` printed the same traces. A command now asks
 * whether Redis answers first and says, within seconds, which server did not and what to check; a connection that
 * loses Redis mid-command fails its commands instead of queueing them forever.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { freePort, systemClock } from '../../core/index.js';
import { createQueued, parseRequest } from '../../executor/index.js';
import { BullMqQueue } from '../../executor/bullmq-queue.js';
import { createLocalStore } from '../../store/index.js';
import { spawnCli } from '../support/cli.js';
import { startRedis } from '../support/private-services.js';
import { tempDir } from '../support/temp-dir.js';

const REQUEST = parseRequest({ workload: 'svc', kind: 'experiment', stage: 'diff' });

/** A project whose queue is a Redis nobody listens on, with one experiment queued in its local store. */
async function projectWithRedisDown(): Promise<{ dir: string; port: number }> {
  const dir = await tempDir();
  const port = await freePort();
  await writeFile(
    join(dir, 'tandem.config.yaml'),
    `queue: { kind: bullmq, redisUrl: "redis://:hunter2@127.0.0.1:${port}" }\nworkloads: [{ name: svc, tier: svc }]\n`,
  );
  const store = createLocalStore({ dir: join(dir, '.tandem') });
  await store.init();
  await createQueued(store, 'exp-1', REQUEST, systemClock);
  await store.close();
  return { dir, port };
}

describe('a command whose Redis is down', () => {
  it.each([
    ['cancel', ['cancel', 'exp-1']],
    ['submit --wait', ['submit', '--base', 'a', '--head', 'b', '--wait']],
    ['worker', ['worker']],
  ])('`tandem %s` says which server did not answer and what to check, once, and exits 2', async (_name, args) => {
    const { dir, port } = await projectWithRedisDown();
    const result = await spawnCli(args, { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.err).toContain(`cannot reach Redis at redis://:***@127.0.0.1:${port}: ECONNREFUSED`);
    expect(result.err).toContain('hint: start redis-server there, or fix queue.redisUrl in the config');
    // One message of its own: no ioredis stack trace, no password.
    expect(result.err).not.toMatch(/\[ioredis\]|    at |hunter2/);
  });

  it('that went away after the queue opened fails the command instead of waiting for it forever', async () => {
    const redis = await startRedis();
    const dir = await tempDir();
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    await store.init();
    onTestFinished(() => store.close());
    const queue = await BullMqQueue.open({ redisUrl: redis.url, prefix: 'down', store, clock: systemClock });
    onTestFinished(() => queue.close());
    const { id } = await queue.submit(REQUEST);
    await redis.stop();
    await expect(queue.cancel(id, 'by a test')).rejects.toThrow(/ECONNREFUSED|Connection is closed|max retries|Reached the max retries/i);
  });
});
