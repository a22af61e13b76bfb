/**
 * `npm run bench -- capacity`: a seconds-scale capacity test on the example
 * stack (features, gateway and prediction as child processes; ranking
 * coordinating with an in-process lattice controller), ramping to 2× the
 * baseline and back, then the same ramp with ranking uncoordinated. Reports
 * the deepest state at 2×, the state after the cooldown, active degradation
 * against overload time, quality loss and no-result rate of both runs.
 */
import { parseConfigText, systemClock } from '../core/index.js';
import { LatticeController, LoadFactors, runCapacityTest, startControllerServer, type CapacitySummary } from '../lattice/index.js';
import { rankingCorpus, startService, startStack } from '../examples/stack/index.js';

const LATTICE = [
  'lattices:',
  '  - name: serving',
  '    services: { ranking: { maxLevel: 5 }, prediction: { maxLevel: 3 } }',
  '    decisionPeriod: 500ms',
  '    recoveryDamping: 4',
  '    window: 2s',
  '    states:',
  '      - { name: L0, threshold: 0, levels: { ranking: 0, prediction: 0 } }',
  '      - { name: L1, threshold: 0.55, levels: { ranking: 2, prediction: 0 } }',
  '      - { name: L2, threshold: 0.7, levels: { ranking: 4, prediction: 1 } }',
  '      - { name: L3, threshold: 1.0, levels: { ranking: 5, prediction: 2 } }',
  '',
].join('\n');

async function capacityRun(coordinated: boolean, baselineRate: number, deadlineMs: number): Promise<CapacitySummary> {
  const lattice = parseConfigText(LATTICE, 'bench').lattices[0]!;
  const loadFactors = new LoadFactors(lattice, systemClock);
  const controller = new LatticeController({ lattice, loadFactors, clock: systemClock });
  const server = await startControllerServer({ lattice, controller, loadFactors });
  const stop = new AbortController();
  const deciding = controller.run(stop.signal);
  const stack = await startStack({ shards: 1, isolate: ['features', 'gateway', 'prediction'] });
  const ranking = await startService('ranking', { featuresUrl: stack.urls.features, inferenceUrl: stack.urls.gateway, ...(coordinated ? { latticeUrl: server.url, latticePollMs: 200 } : {}) });
  try {
    const { summary } = await runCapacityTest({
      url: ranking.urls[0]!,
      records: rankingCorpus(40),
      profile: { baselineRate, peak: 2, leadMs: 3_000, rampMs: 3_000, holdMs: 5_000, cooldownMs: 8_000 },
      ranking: { path: 'items', id: 'id', k: 10 },
      clock: systemClock,
      bucketMs: 500,
      controllerUrl: server.url,
      states: lattice.states.map((s) => s.name),
      stabilityBuckets: 6,
      rollingBuckets: 3,
      // The frontend's deadline: a ranking that cannot fetch features in time answers 504, no results for the user.
      ...(deadlineMs > 0 ? { headers: { 'x-deadline-ms': String(deadlineMs) } } : {}),
    });
    return summary;
  } finally {
    stop.abort();
    await deciding;
    await ranking.close();
    await stack.stop();
    await server.close();
  }
}

export async function run(args: string[]): Promise<void> {
  const baselineRate = Number(args[args.indexOf('--baseline') + 1]) || 50;
  const deadlineMs = args.includes('--deadline') ? Number(args[args.indexOf('--deadline') + 1]) : 0;
  const coordinated = await capacityRun(true, baselineRate, deadlineMs);
  const uncoordinated = await capacityRun(false, baselineRate, deadlineMs);
  process.stderr.write(`coordinated: states up to ${coordinated.maxState}, final ${coordinated.finalState}, degraded ${coordinated.activeDegradationMs / 1000}s of ${coordinated.overloadDurationMs / 1000}s, quality loss ${coordinated.maxQualityLoss.toFixed(3)}, no-result ${coordinated.maxNoResultShare}\n`);
  process.stderr.write(`uncoordinated: states up to ${uncoordinated.maxState}, quality loss ${uncoordinated.maxQualityLoss.toFixed(3)}, no-result ${uncoordinated.maxNoResultShare}\n`);
  const index = (state: string | undefined): number => (state === undefined ? -1 : Number(state.slice(1)));
  const figures = { baselineRate, peak: 2, deadlineMs, coordinated, uncoordinated };
  const targets = {
    coordinatedMaxStateIndex: { value: index(coordinated.maxState), min: 2 },
    coordinatedFinalStateIndex: { value: index(coordinated.finalState), max: 0 },
  };
  process.stdout.write(`${JSON.stringify({ bench: 'capacity', figures, targets })}\n`);
}
