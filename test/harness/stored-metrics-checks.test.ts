/**
 * Issue 70, findings 2 and 3: stored trial metrics are input. A trial-metrics event of 130,000 metrics crashed
 * `tandem report` ("Maximum call stack size exceeded"), forged values were judged (an `error_share` effect of 9.99),
 * a later duplicate event silently won, and a metric named `__proto__` with points −5 and ±1e308 was taken. A stored
 * event is now checked metric by metric; one that fails is named in the report's notes and its trial is computed
 * from its own outcomes instead, never judged as stored.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalStore, type Store } from '../../store/index.js';
import { loadExperimentData, TRIAL_METRICS_EVENT, trialDataOf, trialMetrics, type TrialMetric } from '../../harness/index.js';
import { writeStoredExperiment } from '../support/stored-experiment.js';
import { tempDir } from '../support/temp-dir.js';

async function storedExperiment(id: string): Promise<Store> {
  const store = createLocalStore({ dir: join(await tempDir('tandem-forged-'), '.tandem') });
  await store.init();
  await writeStoredExperiment(store, { id, trials: 5, pairsPerTrial: 200, shift: 0.25, measured: false });
  return store;
}

const asStored = (m: TrialMetric): Record<string, unknown> => {
  const json = (v: number): number | null => (Number.isFinite(v) ? v : null);
  return { ...m, control: json(m.control), treatment: json(m.treatment), effect: json(m.effect), low: json(m.low), high: json(m.high) };
};

/** Trial 0's true metrics, as a worker stores them. */
async function trueMetrics(store: Store, id: string): Promise<TrialMetric[]> {
  const [first] = (await loadExperimentData(store, id, { resamples: 0 })).used;
  return trialMetrics(await trialDataOf(store, id, first!), { seed: 1, resamples: 0 });
}

const event = (store: Store, id: string, timeMs: number, metrics: readonly Record<string, unknown>[], trial = 0) =>
  store.experiments.appendEvent({ experimentId: id, timeMs, type: TRIAL_METRICS_EVENT, data: { trial, attempt: 1, version: 1, metrics } });

describe('stored trial metrics read back', () => {
  it('take an event of 130,000 metrics without overflowing the stack, and recompute that trial', async () => {
    const store = await storedExperiment('exp-huge');
    const one = asStored((await trueMetrics(store, 'exp-huge')).find((m) => m.metric === 'bytes_mean')!);
    await event(
      store,
      'exp-huge',
      1,
      Array.from({ length: 130_000 }, (_, i) => ({ ...one, metric: `metric_${i}` })),
    );
    const data = await loadExperimentData(store, 'exp-huge', { resamples: 0 });
    expect(data.recomputed).toEqual([0, 1, 2, 3, 4]);
    expect(data.corrupt.join('\n')).toMatch(/trial 1 attempt 1.*130000 metrics, more than/);
  });

  it.each([
    [
      'an error_share effect that is not its treatment less its control',
      (m: Record<string, unknown>) => (m.metric === 'error_share' ? { ...m, effect: 9.99 } : m),
      /error_share.*effect/,
    ],
    [
      'a metric named __proto__ with negative points and ±1e308',
      (m: Record<string, unknown>) => (m.metric === 'latency_shift' ? { ...m, metric: '__proto__', points: -5, control: 1e308, treatment: -1e308 } : m),
      /"__proto__"/,
    ],
    [
      'a share outside [0, 1]',
      (m: Record<string, unknown>) => (m.metric === 'error_share' ? { ...m, control: 0, treatment: 7, effect: 7 } : m),
      /error_share.*share/,
    ],
    [
      'a bytes effect that is not the ratio of its values',
      (m: Record<string, unknown>) => (m.metric === 'bytes_mean' ? { ...m, effect: -0.5 } : m),
      /bytes_mean.*effect/,
    ],
    [
      'a metric stored twice in one event',
      (m: Record<string, unknown>) => (m.metric === 'latency_shift' ? [m, { ...m, effect: -0.5 }] : m),
      /latency_shift.*more than once/,
    ],
    [
      "a scale that is not its metric's",
      (m: Record<string, unknown>) => (m.metric === 'latency_shift' ? { ...m, scale: 'absolute' } : m),
      /latency_shift.*scale/,
    ],
  ])('are not judged when they hold %s: that trial is computed from its outcomes, and the report names why', async (_name, forge, why) => {
    const store = await storedExperiment('exp-forged');
    const truth = await trueMetrics(store, 'exp-forged');
    await event(store, 'exp-forged', 1, truth.map(asStored).flatMap((m) => forge(m)) as Record<string, unknown>[]);
    const data = await loadExperimentData(store, 'exp-forged', { resamples: 0 });
    expect(data.recomputed).toContain(0);
    expect(data.corrupt.join('\n')).toMatch(why);
    const judged = data.metrics.filter((m) => m.trial === 0);
    expect(judged.map((m) => m.metric).sort()).toEqual(truth.map((m) => m.metric).sort());
    expect(judged.find((m) => m.metric === 'error_share')!.effect).toBe(truth.find((m) => m.metric === 'error_share')!.effect);
  });

  it('trust neither of two events for one trial attempt that disagree: a later duplicate does not silently win', async () => {
    const store = await storedExperiment('exp-twice');
    const truth = (await trueMetrics(store, 'exp-twice')).map(asStored);
    await event(store, 'exp-twice', 1, truth);
    await event(
      store,
      'exp-twice',
      2,
      truth.map((m) => (m.metric === 'latency_shift' ? { ...m, effect: -0.9, control: 10, treatment: 1 } : m)),
    );
    const data = await loadExperimentData(store, 'exp-twice', { resamples: 0 });
    expect(data.recomputed).toContain(0);
    expect(data.corrupt.join('\n')).toMatch(/trial 1 attempt 1: stored twice, differently/);
    // Stored twice alike is one event.
    const again = await storedExperiment('exp-alike');
    const same = (await trueMetrics(again, 'exp-alike')).map(asStored);
    await event(again, 'exp-alike', 1, same);
    await event(again, 'exp-alike', 2, same);
    const alike = await loadExperimentData(again, 'exp-alike', { resamples: 0 });
    expect([alike.recomputed.includes(0), alike.corrupt]).toEqual([false, []]);
  });
});
