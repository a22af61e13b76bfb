/**
 * Cancellation that reaches a running experiment from any process: `tandem
 * cancel` stores a `cancel-requested` event (durable, works with any queue),
 * and the process running the experiment polls for it. The BullMQ queue also
 * publishes the id on Redis, which is faster; this watch is the floor.
 */
import { ExperimentCancelledError, type Clock } from '../core/index.js';
import type { Store } from '../store/index.js';

export const CANCEL_EVENT = 'cancel-requested';

export async function requestCancel(store: Pick<Store, 'experiments'>, id: string, reason: string, clock: Clock): Promise<void> {
  await store.experiments.appendEvent({ experimentId: id, timeMs: clock.now(), type: CANCEL_EVENT, message: reason });
}

/** Poll the store every `intervalMs` until a cancel request for `id` arrives (then abort) or `signal` ends the watch. */
export async function watchCancellation(
  store: Pick<Store, 'experiments'>,
  id: string,
  controller: AbortController,
  clock: Clock,
  signal: AbortSignal,
  intervalMs = 250,
): Promise<void> {
  while (!signal.aborted && !controller.signal.aborted) {
    try {
      const events = await store.experiments.events(id, { types: [CANCEL_EVENT] });
      const request = events.find((e) => e.type === CANCEL_EVENT);
      if (request) {
        controller.abort(new ExperimentCancelledError(`cancelled: ${request.message ?? 'by request'}`));
        return;
      }
    } catch {
      // An unreadable store is retried on the next tick; the experiment's own writes will report it.
    }
    try {
      await clock.sleep(intervalMs, signal);
    } catch {
      return;
    }
  }
}
