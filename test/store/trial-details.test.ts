/**
 * Issue 70, finding 4: what a trial stores was untyped (`details: Record<string, unknown>`), written by the replayer
 * and read back through untyped reads. It now has one schema (core/trial-details.ts) that readers compile against
 * and that a record read back passes field by field: a field of the wrong shape is dropped and named, and a completed
 * trial whose load or slots cannot be read is not judged.
 */
import { describe, expect, it } from 'vitest';
import { experimentRecordOf } from '../../store/record-guards.js';

const trial = (details: unknown) => ({ index: 0, attempt: 1, status: 'completed', startedAtMs: 1, endedAtMs: 2, details });
const record = (details: unknown) => ({
  id: 'e',
  workload: 'w',
  status: 'completed',
  createdAtMs: 1,
  updatedAtMs: 2,
  seed: 1,
  spec: {},
  trials: [trial(details)],
});
const GOOD = {
  load: 'ok',
  targetRate: 50,
  achievedRate: 49.5,
  slots: { control: 'A', treatment: 'B' },
  prewarm: { sent: 20, errors: 0 },
  dependencies: [{ arm: 'treatment', dependency: 'features', policy: 'isolated', calls: 30, errors: 0, blocked: 0, replayedRequests: 10 }],
};

describe('a trial record read back from a store', () => {
  it('keeps details of their own shape as they are, and drops what another version wrote that no reader knows', () => {
    const read = experimentRecordOf(record({ ...GOOD, fromTheFuture: 1 }))!;
    expect(read.trials[0]).toEqual(trial(GOOD));
  });

  it.each([
    ['a load that is neither ok nor failed', { ...GOOD, load: 'fine' }, /^load: /],
    ['slots that are not A and B', { ...GOOD, slots: { control: 'A', treatment: 'C' } }, /^slots: /],
    ['details that are not an object', 'fast', /^details: not an object/],
  ])('excludes a completed trial with %s, naming it, instead of judging it', (_name, details, why) => {
    const read = experimentRecordOf(record(details))!.trials[0]!;
    expect(read.status).toBe('excluded');
    expect(read.reason).toMatch(/^its stored details are unreadable/);
    expect(read.details?.unreadable?.[0]).toMatch(why);
  });

  it('drops a field of the wrong shape, and only it, naming it; a __proto__ key replaces nothing', () => {
    const hostile = JSON.parse(
      `{"load":"ok","slots":{"control":"B","treatment":"A"},"prewarm":{"sent":"20","errors":0},"dependencies":[{"arm":"treatment","calls":-5}],"__proto__":{"load":"failed"},"otherWorkOnArmCpus":7}`,
    ) as unknown;
    const read = experimentRecordOf(record(hostile))!.trials[0]!;
    expect(read.status).toBe('completed');
    expect(read.details).toEqual({
      load: 'ok',
      slots: { control: 'B', treatment: 'A' },
      unreadable: [expect.stringMatching(/^prewarm: /), expect.stringMatching(/^dependencies: /), expect.stringMatching(/^otherWorkOnArmCpus: /)],
    });
    expect(Object.getPrototypeOf(read.details)).toBe(Object.prototype);
  });

  it('is no experiment record when its trials are not a list', () => {
    expect(experimentRecordOf({ ...record(GOOD), trials: { 0: trial(GOOD) } })).toBeUndefined();
  });
});
