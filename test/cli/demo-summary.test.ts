import { describe, expect, it } from 'vitest';
import { parseDemoSteps, printSummary } from '../../cli/commands/demo.js';
import type { DemoResult } from '../../examples/demo/run-demo.js';
import type { CliContext } from '../../cli/cli-context.js';

/** printSummary's lines for a result. */
function summaryLines(result: DemoResult): string[] {
  const lines: string[] = [];
  const ctx: CliContext = { cwd: '/home/me/project', env: {}, out: (text) => lines.push(text), err: () => undefined };
  printSummary(result, ctx);
  return lines;
}

const step = (n: number, asExpected = true): DemoResult['steps'][number] => ({
  step: n,
  title: `step ${n}`,
  verdict: 'passed',
  keyFigure: 'figure',
  asExpected,
});

describe('the demo’s summary', () => {
  it('says what rate the trials ran at, what a request cost, and, when trials could not hold the rate, what it was lowered from and why', () => {
    const lowered = summaryLines({
      dir: '/home/me/project/.tandem/demo',
      corpusRecords: 671,
      recordingMs: 27_000,
      trials: {
        pairsPerSecond: 28,
        quiet: true,
        rankingCpuMsPerRequest: 15.27,
        probed: false,
        loweredFrom: { pairsPerSecond: 100, achieved: [37, 42.33, 45.67], experimentId: 'exp-3e5e' },
      },
      steps: [step(1), step(3)],
      ok: true,
    });
    expect(lowered).toContain(
      'trials: 28 pairs/s (quiet machine; a ranking request cost 15.3 ms of CPU while recording; lowered from 100, where the trials of exp-3e5e achieved 37.0, 42.3, 45.7)',
    );
    const chosen = summaryLines({
      dir: '/tmp/demo',
      corpusRecords: 143,
      recordingMs: 4_000,
      trials: { pairsPerSecond: 10, quiet: false, rankingCpuMsPerRequest: 32.8, probed: true },
      steps: [step(1), step(2, false)],
      ok: false,
    });
    expect(chosen).toContain('trials: 10 pairs/s (busy machine; a ranking request cost 32.8 ms of CPU in a probe after recording)');
    // Only the steps that ran are listed, and the ones not as expected are named.
    expect(chosen.filter((line) => /^[ !] \d\. step/.test(line)).map((line) => line.slice(0, 12))).toEqual(['  1. step 1 ', '! 2. step 2 ']);
    expect(chosen).toContain('steps marked ! did not show what they are meant to: 2');
  });

  it('takes --only as steps from 1 to 5, each once', () => {
    expect([...parseDemoSteps('1,3,5')]).toEqual([1, 3, 5]);
    expect([...parseDemoSteps(' 4 , 2')]).toEqual([4, 2]);
    for (const bad of ['', '0', '6', '1,1', '1,,3', '1-3', '1;id', 'all']) expect(() => parseDemoSteps(bad), bad).toThrow(/--only must list steps from 1 to 5/);
  });
});
