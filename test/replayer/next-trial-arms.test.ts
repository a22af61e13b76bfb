import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { systemClock } from '../../core/index.js';
import { DeployedArms } from '../../replayer/index.js';
import { NextTrialArms } from '../../replayer/next-trial-arms.js';

const ARM_SERVER = join(import.meta.dirname, 'fixtures', 'arm-server.ts');
const spec = { command: `${process.execPath} --import tsx ${ARM_SERVER}`, readyPath: '/healthz', readyTimeoutMs: 20_000, cwd: process.cwd() };

/** A warm-up that sends nothing and lasts until it is told the trial beside it has ended; says which trials it warmed and how each ended. */
function endlessWarm(): { warm: (deployments: unknown, index: number, trialEnded: AbortSignal) => Promise<void>; ended: number[] } {
  const ended: number[] = [];
  const warm = (_deployments: unknown, index: number, trialEnded: AbortSignal): Promise<void> =>
    new Promise<void>((resolve) => {
      const end = (): void => {
        ended.push(index);
        resolve();
      };
      if (trialEnded.aborted) end();
      else trialEnded.addEventListener('abort', end, { once: true });
    });
  return { warm, ended };
}

describe('NextTrialArms: the warm-up of arms started early', () => {
  it('ends when the trial they were started beside ends its window, so their trial never waits for it', async () => {
    const { warm, ended } = endlessWarm();
    const next = new NextTrialArms(new DeployedArms({ specs: { control: spec, treatment: spec }, clock: systemClock }), undefined, warm);
    onTestFinished(() => next.stop());
    const ready = next.start(1);
    // The trial beside them ends: a warm-up that would otherwise never end, ends (this awaits nothing else).
    next.endWarming();
    const processes = await ready;
    expect(processes.map((p) => p.arm).sort()).toEqual(['control', 'treatment']);
    expect(ended).toEqual([1]);
    const taken = await next.take(1)!;
    expect([taken.control.slot, taken.treatment.slot]).toEqual(['B', 'A']);
    await Promise.all([taken.control.stop(), taken.treatment.stop()]);
  });

  it('ends when their trial takes them, and a warm-up of arms no trial took is not ended by another trial', async () => {
    const { warm, ended } = endlessWarm();
    const next = new NextTrialArms(new DeployedArms({ specs: { control: spec, treatment: spec }, clock: systemClock }), undefined, warm);
    onTestFinished(() => next.stop());
    const ready = next.start(2);
    const taken = await next.take(2)!;
    onTestFinished(async () => void (await Promise.all([taken.control.stop(), taken.treatment.stop()])));
    expect(ended).toEqual([2]);
    expect((await ready).length).toBe(2);
    // Nothing started early any more: ending the warm-up of the trial beside is nothing to do.
    next.endWarming();
    expect(next.take(3)).toBeUndefined();
    expect(ended).toEqual([2]);
  });

  it('ends when no trial will take them: stopping arms started early does not wait for their warm-up', async () => {
    const { warm, ended } = endlessWarm();
    const next = new NextTrialArms(new DeployedArms({ specs: { control: spec, treatment: spec }, clock: systemClock }), undefined, warm);
    const ready = next.start(4);
    await next.stop();
    expect(ended).toEqual([4]);
    // Stopped: their processes are gone.
    for (const { pid } of await ready) expect(() => process.kill(pid, 0)).toThrow();
  });
});
