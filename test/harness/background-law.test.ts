import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compiledBuild } from '../../bin/compiled-build.js';
import { parseConfig } from '../../core/index.js';
import { lawOfWorkload, sequentialBoundary, simulateLawInBackground } from '../../harness/index.js';
import { REPO_ROOT } from '../support/cli.js';

type Harness = typeof import('../../harness/index.js');

describe('a law of the looks simulated in a worker thread', () => {
  it('is the law the first look would simulate, kept for the looks of the compiled build that asked for it', async () => {
    // Worker threads run compiled JavaScript: the build the CLI runs from.
    const compiled = (await import(pathToFileURL(join(await compiledBuild(REPO_ROOT), 'harness', 'index.js')).href)) as Harness;
    const law = { maxTrials: 9, slotted: true, serial: 'given', estimator: 'huber' } as const;
    expect(compiled.hasLaw(law)).toBe(false);
    expect(await compiled.simulateLawInBackground(law)).toBe(true);
    expect(compiled.hasLaw(law)).toBe(true);
    const design = { ...law, minTrials: 5 };
    const fromWorker = compiled.sequentialBoundary(design);
    const simulatedHere = sequentialBoundary(design);
    for (const n of [5, 7, 9]) {
      expect(fromWorker.nominalLevel(0.05, n)).toBe(simulatedHere.nominalLevel(0.05, n));
      expect(fromWorker.anytimeP(0.01, n)).toBe(simulatedHere.anytimeP(0.01, n));
    }
  });

  it('does nothing from the TypeScript sources, where no compiled worker is beside it: the first look simulates', async () => {
    expect(await simulateLawInBackground({ maxTrials: 7, slotted: false, serial: 'own', estimator: 'huber' })).toBe(false);
  });

  it("names the law a workload is judged on: deployed arms' slots, and the looks' own correlation for both kinds of arms", () => {
    const deploy = { command: 'serve {port}' };
    const [deployed, urls] = parseConfig({
      workloads: [
        { name: 'd', tier: 't', arms: { control: { deploy }, treatment: { deploy } }, trials: { min: 4, max: 20 } },
        { name: 'u', tier: 't', arms: { control: { url: 'http://127.0.0.1:1' }, treatment: { url: 'http://127.0.0.1:2' } } },
      ],
    }).workloads;
    expect(lawOfWorkload(deployed!)).toEqual({ maxTrials: 20, slotted: true, serial: 'own', estimator: 'huber' });
    expect(lawOfWorkload(urls!)).toEqual({ maxTrials: 30, slotted: false, serial: 'own', estimator: 'huber' });
  });
});
