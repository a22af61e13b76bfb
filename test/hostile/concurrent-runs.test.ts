/**
 * Two runners of the same change at once (issue 18): the second used to take
 * the live run for an orphan, resume it and double its outcomes. Now the run
 * holds a lease; the second runner sees who runs it and does not run it.
 */
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Clock } from '../../core/index.js';
import { systemClock } from '../../core/index.js';
import { createLocalStore } from '../../store/index.js';
import { InlineQueue, LEASE_TTL_MS, claimRun, liveRunner, parseRequest, type ExperimentRunner } from '../../executor/index.js';
import { tempDir } from '../support/temp-dir.js';

describe('one runner per experiment', () => {
  it('the second of two simultaneous runners does not run the experiment, and names who does', async () => {
    const store = createLocalStore({ dir: join(await tempDir(), '.tandem') });
    await store.init();
    const runs: string[] = [];
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const run =
      (who: string): ExperimentRunner =>
      async () => {
        runs.push(who);
        await finished;
      };
    const first = new InlineQueue({ store, clock: systemClock, run: run('first'), holder: 'host:1:a' });
    const second = new InlineQueue({ store, clock: systemClock, run: run('second'), holder: 'host:2:b' });
    onTestFinished(async () => {
      await first.close();
      await second.close();
    });
    const request = parseRequest({ workload: 'w', kind: 'noop', change: 'C' });
    const [a, b] = await Promise.all([first.submit(request), second.submit(request)]);
    expect(a.id).toBe(b.id);
    // Whichever claimed first runs it; the other is told who.
    const owner = await waitUntilDefined(() => liveRunner(store, a.id, systemClock));
    const loser = owner === 'host:1:a' ? second : first;
    await loser.idle();
    expect(loser.heldElsewhere.get(a.id)).toBe(owner);
    finish();
    await Promise.all([first.idle(), second.idle()]);
    expect(runs).toHaveLength(1);
    expect(await liveRunner(store, a.id, systemClock)).toBeUndefined();
  });

  it('a runner that died stops holding the run once its lease lapses', async () => {
    const store = createLocalStore({ dir: join(await tempDir(), '.tandem') });
    await store.init();
    let now = 1_800_000_000_000;
    const clock: Clock = { now: () => now, monotonic: () => now, sleep: () => Promise.resolve() };
    expect(await claimRun(store, 'exp-1', 'dead:1:a', clock)).toBe('dead:1:a');
    now += 1_000;
    expect(await claimRun(store, 'exp-1', 'live:2:b', clock)).toBe('dead:1:a');
    now += LEASE_TTL_MS;
    expect(await claimRun(store, 'exp-1', 'live:2:b', clock)).toBe('live:2:b');
  });
});

async function waitUntilDefined<T>(read: () => Promise<T | undefined>): Promise<T> {
  // Bounded: the claim is written before submit's run starts; a few reads find it.
  for (let i = 0; i < 500; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('no runner claimed the experiment');
}
