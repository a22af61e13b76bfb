/**
 * Time is passed in, never read from globals inside feature code, so loops
 * (monitors, controllers, schedulers) can be driven by fake timers in tests.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Monotonic milliseconds with sub-millisecond resolution, for measuring durations. */
  monotonic(): number;
  /** Resolve after `ms`, or reject with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Node's timers hold at most 2^31 - 1 ms (24.8 days); a longer delay fires after 1 ms. Longer sleeps wait in steps. */
export const MAX_TIMER_MS = 2_147_483_647;

/** The real clock. `setTimeout` is looked up on each call so vitest's fake timers apply. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = (): void => {
        clearTimeout(timer!);
        reject(signal?.reason);
      };
      let remaining = Math.max(0, ms);
      let timer: ReturnType<typeof setTimeout>;
      const step = (): void => {
        const wait = Math.min(remaining, MAX_TIMER_MS);
        remaining -= wait;
        timer = setTimeout(() => {
          if (remaining > 0) return step();
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }, wait);
      };
      step();
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
