import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it, onTestFinished } from 'vitest';
import { systemClock } from '../../core/index.js';
import { leftoversOf, recordProcess, stopLeftovers } from '../../replayer/index.js';
import { TrialLedger } from '../../replayer/trial-ledger.js';

function detachedSleeper(): { pid: number; exited: Promise<unknown> } {
  const child = spawn('sh', ['-c', 'sleep 30 & wait'], { detached: true, stdio: 'ignore' });
  onTestFinished(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already stopped by the test
    }
  });
  return { pid: child.pid!, exited: once(child, 'exit') };
}

describe('arms left behind by a killed run', () => {
  it('stops the process groups an interrupted attempt recorded, and only processes that are still the recorded ones', async () => {
    const left = detachedSleeper();
    const other = detachedSleeper();
    const recorded = recordProcess('treatment', left.pid);
    expect(recorded.startTicks).toBeGreaterThan(0);
    // A running attempt's processes are leftovers; a finished attempt's are not.
    const trials = [
      { status: 'running', details: { processes: [recorded] } },
      { status: 'completed', details: { processes: [recordProcess('control', other.pid)] } },
    ];
    expect(leftoversOf(trials)).toEqual([recorded]);
    // Arms an attempt started ahead for the next trial are leftovers whatever became of the attempt.
    const ahead = recordProcess('control', other.pid);
    expect(leftoversOf([{ status: 'completed', details: { prestarted: [ahead] } }])).toEqual([ahead]);
    // The same pid with another start time is someone else's process now: left alone.
    expect(stopLeftovers([{ arm: 'control', pid: other.pid, startTicks: recordProcess('control', other.pid).startTicks! + 1 }])).toBe(0);
    expect(stopLeftovers(leftoversOf(trials))).toBe(1);
    await left.exited;
    expect(() => process.kill(other.pid, 0)).not.toThrow();
  });
});

describe('the trial ledger', () => {
  it('stores its records one write after another, so a settled attempt is never overwritten by an earlier write', async () => {
    const stored: string[] = [];
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    let writes = 0;
    let inFlight = 0;
    let mostInFlight = 0;
    const ledger = new TrialLedger([], systemClock, 2, async (trials) => {
      const state = trials.map((t) => t.status).join(',');
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      // The annotation's write is slow (a store under load): the settled record's must not land before it.
      if (writes++ === 1) await firstHeld;
      stored.push(state);
      inFlight--;
    });
    await ledger.start(0, 1, 0);
    const annotated = ledger.annotate(0, 1, { prestarted: [] });
    const settled = ledger.settle({ index: 0, attempt: 1, status: 'completed', startedAtMs: 0, endedAtMs: 1 });
    releaseFirst();
    await Promise.all([annotated, settled]);
    expect(mostInFlight).toBe(1);
    expect(stored.at(-1)).toBe('completed');
    // What the attempt started ahead for the next trial stays recorded once it has settled.
    expect(ledger.trials[0]!.details).toEqual({ prestarted: [] });
  });
});
