import { describe, expect, it } from 'vitest';
import { contendedTrialsNote } from '../../harness/contention-note.js';
import type { TrialRecord } from '../../core/index.js';

describe("the report's note on other work on the arms' CPUs", () => {
  it('notes the judged trials where other work took more than a quarter of the arms’ CPUs, and nothing when none did', () => {
    const trial = (index: number, share?: number): TrialRecord => ({ index, attempt: 1, status: 'completed', startedAtMs: 0, endedAtMs: 1, details: share === undefined ? {} : { otherWorkOnArmCpus: share } });
    expect(contendedTrialsNote([trial(0, 0.05), trial(1, 0.62), trial(2, 0.3), trial(3)])).toBe(
      "other work took more than 25% of the arms' CPUs in 2 of 3 judged trial(s) (trials 2, 3; the most 62%, in trial 2): pairing cancels only what that work did to both arms alike",
    );
    expect(contendedTrialsNote([trial(0, 0.25), trial(1)])).toBeUndefined();
    expect(contendedTrialsNote([])).toBeUndefined();
  });
});
