import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it, onTestFinished } from 'vitest';
import { leftoversOf, recordProcess, stopLeftovers } from '../../replayer/index.js';

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
    // Arms an attempt started early for the next trial (trials.prestart) are leftovers whatever became of that attempt.
    const early = recordProcess('control', other.pid);
    expect(
      leftoversOf([
        { status: 'completed', details: { prestarted: [early] } },
        { status: 'running', details: { processes: [recorded], prestarted: [early] } },
      ]),
    ).toEqual([early, recorded, early]);
    // The same pid with another start time is someone else's process now: left alone.
    expect(stopLeftovers([{ arm: 'control', pid: other.pid, startTicks: recordProcess('control', other.pid).startTicks! + 1 }])).toBe(0);
    expect(stopLeftovers(leftoversOf(trials))).toBe(1);
    await left.exited;
    expect(() => process.kill(other.pid, 0)).not.toThrow();
  });
});
