import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { systemClock, type DetectorObservation } from '../../core/index.js';
import { createLocalStore, type Store } from '../../store/index.js';
import { LiveWrites } from '../../executor/live-writes.js';

async function store(): Promise<Store> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-live-writes-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const s = createLocalStore({ dir });
  await s.init();
  return s;
}

const check = (timeMs: number): DetectorObservation => ({ experimentId: 'exp-1', detector: 'errors', timeMs, value: 1, baseline: 0, verdict: 'violation' });
const progress = {
  phase: 'measure' as const,
  elapsedMs: 1_000,
  remainingMs: 2_000,
  sentPairs: 20,
  droppedPairs: 1,
  inflight: { control: 0, treatment: 2 },
  errors: { control: 0, treatment: 3 },
  rate: 19.5,
};

it('writes each detector check and the replay progress while the experiment runs, not at its end', async () => {
  const s = await store();
  const live = new LiveWrites(s, 'exp-1', systemClock);
  live.observation(check(1));
  live.progress(0, 1, progress);
  live.progress(0, 1, { ...progress, rate: 30 }); // within 2 s of the last, same phase: not written
  live.progress(0, 2, { ...progress, rate: 40 }); // a new attempt: written at once
  live.observation(check(2));
  // Readers see the writes before finish(): what a dashboard on another machine reads.
  await expect.poll(async () => (await s.observations.read('exp-1')).map((o) => o.timeMs)).toEqual([1, 2]);
  await expect
    .poll(async () => (await s.experiments.events('exp-1')).map((e) => [e.type, e.data?.trial, e.data?.rate]))
    .toEqual([
      ['progress', 0, 19.5],
      ['progress', 0, 40],
    ]);
  await live.finish();
  expect(await s.observations.read('exp-1')).toHaveLength(2);
});

it('keeps checks the store refused and writes them at the end, or reports the store still down', async () => {
  const s = await store();
  const append = s.observations.append.bind(s.observations);
  const attempts: number[][] = [];
  // Down for the first write only.
  const flaky: Store = {
    ...s,
    observations: {
      ...s.observations,
      append: (o) => (attempts.push(o.map((x) => x.timeMs)) === 1 ? Promise.reject(new Error('store down')) : append(o)),
      read: s.observations.read.bind(s.observations),
    },
  };
  const live = new LiveWrites(flaky, 'exp-1', systemClock);
  live.observation(check(1));
  await live.finish();
  live.observation(check(2));
  await live.finish();
  expect(attempts).toEqual([[1], [1], [2]]);
  expect((await s.observations.read('exp-1')).map((o) => o.timeMs)).toEqual([1, 2]);
  const stillDown = new LiveWrites(
    { ...flaky, observations: { ...flaky.observations, append: () => Promise.reject(new Error('store down')) } },
    'exp-1',
    systemClock,
  );
  stillDown.observation(check(3));
  await expect(stillDown.finish()).rejects.toThrow('store down');
});
