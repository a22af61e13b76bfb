/**
 * Issue 70, finding 7: `validate` says when a design can never decide — also when a critical threshold is finer than
 * the workload's own noise allows in its trials or its budget, by its last A/A calibration's plan.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Calibration } from '../../harness/index.js';
import { createLocalStore } from '../../store/index.js';
import { experiment } from '../support/dashboard-fixtures.js';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/temp-dir.js';

/** A calibration whose CPU per request needs 120 trials within ±2% (its latency only 12). */
const calibration = (plans: Record<string, readonly [number, number, number]>): Calibration =>
  ({
    metrics: Object.fromEntries(
      Object.entries(plans).map(([metric, [one, two, five]]) => [
        metric,
        {
          plan: [
            { change: 0.01, trials: one },
            { change: 0.02, trials: two },
            { change: 0.05, trials: five },
          ],
        },
      ]),
    ),
  }) as unknown as Calibration;

describe('tandem validate against the calibration', () => {
  it('warns of a critical threshold the last calibration says the design cannot reach in its trials or its budget, and of no other', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'tandem.config.yaml'), 'workloads:\n  - name: w\n    tier: t\n  - name: quick\n    tier: t\n    trials: { budget: 1m }\n');
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    await store.init();
    for (const [workload, plans] of [
      ['w', { cpu_per_request: [480, 120, 20], latency_shift: [48, 12, 6] }],
      ['quick', { latency_shift: [80, 20, 6] }],
    ] as const) {
      await store.experiments.put(
        experiment({
          id: `aa-${workload}`,
          workload,
          status: 'completed',
          spec: { kind: 'calibration', stage: 'periodic' },
          verdict: { calibration: calibration(plans) } as never,
        }),
      );
    }
    await store.close();
    const result = await runCli(['validate'], { cwd: dir });
    expect(result.code).toBe(0);
    const warnings = result.err.split('\n').filter((line) => line.startsWith('warning:'));
    expect(warnings).toEqual([
      "warning: workloads[0].checks: cpu_per_request at ±2.0% needs about 120 trials at the noise the workload's last calibration measured; trials.max is 30: raise it, raise the threshold, or cut the noise (docs/verdicts.md)",
      "warning: workloads[1].checks: latency_shift at ±2.0% needs about 20 trials, at least 4.3 min, at the noise the workload's last calibration measured; trials.budget is 1.0 min",
    ]);
  });
});
