import { describe, expect, it } from 'vitest';
import { contendedTrialsNote, slowedTrialsNote } from '../../harness/metrics/contention-note.js';
import type { TrialRecord } from '../../core/index.js';

describe("the report's note on other work on the arms' CPUs", () => {
  it('notes the judged trials where other work took more than a quarter of the arms’ CPUs, and nothing when none did', () => {
    const trial = (index: number, share?: number): TrialRecord => ({
      index,
      attempt: 1,
      status: 'completed',
      startedAtMs: 0,
      endedAtMs: 1,
      details: share === undefined ? {} : { otherWorkOnArmCpus: share },
    });
    expect(contendedTrialsNote([trial(0, 0.05), trial(1, 0.62), trial(2, 0.3), trial(3)])).toBe(
      "other work took more than 25% of the arms' CPUs in 2 of 3 judged trial(s) (trials 2, 3; the most 62%, in trial 2): pairing cancels only what that work did to both arms alike",
    );
    expect(contendedTrialsNote([trial(0, 0.25), trial(1)])).toBeUndefined();
    expect(contendedTrialsNote([])).toBeUndefined();
  });

  it('notes the judged trials where a request cost both arms a quarter more CPU than in the fastest trial, and nothing when none did', () => {
    const cpu = (trial: number, control: number, treatment: number) => ({ metric: 'cpu_per_request', trial, control, treatment });
    // Trial levels (geometric means): 11.0, 11.5, 18.0 and 14.1 ms, the last two at least a quarter above the first.
    const metrics = [
      cpu(0, 0.011, 0.011),
      cpu(1, 0.0115, 0.0115),
      cpu(2, 0.018, 0.018),
      cpu(3, 0.0125, 0.016),
      { metric: 'latency_shift', trial: 2, control: 90, treatment: 90 },
    ];
    expect(slowedTrialsNote(metrics)).toBe(
      'a request cost both arms 25% or more CPU than in the fastest trial (11.0 ms, trial 1) in 2 of 4 judged trial(s) (up to 18.0 ms, in trial 3): the machine slowed both arms alike there; pairing cancels that from the difference, not from the ratio, so a change that adds a fixed amount of work measures smaller in them',
    );
    // A treatment that costs 30% more is not the machine slowing down: the level is both arms', and stays within a quarter.
    expect(slowedTrialsNote([cpu(0, 0.011, 0.0143), cpu(1, 0.011, 0.0143)])).toBeUndefined();
    expect(slowedTrialsNote([cpu(0, 0.011, 0.011), cpu(1, 0.013, 0.013)])).toBeUndefined();
    expect(slowedTrialsNote([cpu(0, 0.011, 0.011)])).toBeUndefined();
    expect(slowedTrialsNote([cpu(0, Number.NaN, 0.011), cpu(1, 0, 0.02), cpu(2, 0.011, 0.011)])).toBeUndefined();
  });

  it('gives how far the paired effect spread in the slowed trials and in the others, with three or more of each', () => {
    const cpu = (trial: number, control: number, logEffect: number) => ({
      metric: 'cpu_per_request',
      trial,
      control,
      treatment: control * Math.exp(logEffect),
    });
    // Log effects −1%, 0, +1% (sd 1.0%) at 11 ms, and −3%, 0, +3% (sd 3.0%) at 18 ms: a stretch that widened the trials.
    const quick = [cpu(0, 0.011, -0.01), cpu(1, 0.011, 0), cpu(2, 0.011, 0.01)];
    const slowed = [cpu(3, 0.018, -0.03), cpu(4, 0.018, 0), cpu(5, 0.018, 0.03)];
    expect(slowedTrialsNote([...quick, ...slowed])).toMatch(
      /in 3 of 6 judged trial\(s\) .*; the paired effect on CPU per request had an sd of 3\.0% across them and of 1\.0% across the other 3$/,
    );
    // Two slowed trials: their sd would say little, and the note does not give it.
    expect(slowedTrialsNote([...quick, ...slowed.slice(0, 2)])).toMatch(/measures smaller in them$/);
  });
});
