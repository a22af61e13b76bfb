import { afterEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../core/index.js';
import { NoWorkerAvailableError, WorkerCrashedError, WorkerPool } from '../../examples/stack/worker-pool.js';

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('worker pool', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fails the in-flight tasks of a crashed worker, keeps the others, and restarts it after the delay', async () => {
    vi.useFakeTimers();
    const crashes: number[] = [];
    const pool = new WorkerPool({ service: 'test', size: 2, clock: systemClock, restartDelayMs: 250, onCrash: (id) => crashes.push(id) });
    const onFirst = deferred<string>();
    const onSecond = deferred<string>();
    let firstWorker!: { crash(reason: string): void };
    const first = pool.run(async (worker) => {
      firstWorker = worker;
      return onFirst.promise;
    });
    const alsoFirst = pool.run(async () => onSecond.promise); // worker 1
    const third = pool.run(async () => 'third'); // worker 0 again, still in flight when it crashes
    firstWorker.crash('bad tensor');
    await expect(first).rejects.toBeInstanceOf(WorkerCrashedError);
    await expect(third).rejects.toBeInstanceOf(WorkerCrashedError);
    expect(pool.restarts).toBe(1);
    expect(pool.alive).toBe(1);
    expect(crashes).toEqual([0]);
    // Only worker 1 takes work while worker 0 restarts.
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) await pool.run(async (w) => ids.push(w.id));
    expect(ids).toEqual([1, 1, 1]);
    onSecond.resolve('second');
    expect(await alsoFirst).toBe('second');
    await vi.advanceTimersByTimeAsync(249);
    expect(pool.alive).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(pool.alive).toBe(2);
    pool.close();
  });

  it('refuses work while every worker is down, and counts each crash once', async () => {
    vi.useFakeTimers();
    const pool = new WorkerPool({ service: 'test', size: 1, clock: systemClock, restartDelayMs: 100 });
    await expect(
      pool.run(async (worker) => {
        worker.crash('one');
        worker.crash('again');
        return 'never';
      }),
    ).rejects.toThrow('worker 0 crashed: one');
    expect(pool.restarts).toBe(1);
    await expect(pool.run(async () => 'x')).rejects.toBeInstanceOf(NoWorkerAvailableError);
    await vi.advanceTimersByTimeAsync(100);
    expect(await pool.run(async () => 'back')).toBe('back');
    pool.close();
  });
});
