/**
 * `npm run bench -- capacity`: the example stack's capacity story
 * (examples/stack/capacity-scenario.ts) at 2× the baseline peak, once with
 * the lattice controller live and once with every service on its own — the
 * uncoordinated run is the baseline. Reports the deepest state, the state
 * after the cooldown, active degradation against overload time, quality loss,
 * no-result rate and recovery times of both runs.
 *   --baseline R   requests per second at 1× (default: chosen for this host, at most 20; see examples/stack/capacity-rate.ts)
 *   --hold S       seconds at the peak (default 4)
 */
import { runExampleCapacity } from '../examples/stack/index.js';
import { numberFlag } from './support/bench-args.js';

export async function run(args: string[]): Promise<void> {
  const requestedRate = args.includes('--baseline') ? numberFlag(args, 'baseline', 0, { min: 1, max: 200 }) : undefined;
  const holdMs = numberFlag(args, 'hold', 4, { min: 1, max: 120 }) * 1000;
  const coordinated = await runExampleCapacity({
    coordinated: true,
    ...(requestedRate !== undefined ? { baselineRate: requestedRate } : {}),
    profile: { holdMs },
  });
  // The uncoordinated baseline runs at the coordinated run's rate, chosen or given.
  const baselineRate = coordinated.profile.baselineRate;
  const uncoordinated = await runExampleCapacity({ coordinated: false, baselineRate, profile: { holdMs } });
  const states = coordinated.lattice.states.map((s) => s.name);
  const c = coordinated.summary;
  const u = uncoordinated.summary;
  process.stderr.write(
    `coordinated: states up to ${c.maxState}, final ${c.finalState}, degraded ${c.activeDegradationMs / 1000}s of ${c.overloadDurationMs / 1000}s overload, NDCG loss ${c.maxQualityLoss.toFixed(3)}, no-result mean ${(c.meanNoResultShare * 100).toFixed(1)}% max ${(c.maxNoResultShare * 100).toFixed(1)}%, quality recovery ${c.qualityRecoveryMs}ms\n`,
  );
  process.stderr.write(
    `uncoordinated: NDCG loss ${u.maxQualityLoss.toFixed(3)}, no-result mean ${(u.meanNoResultShare * 100).toFixed(1)}% max ${(u.maxNoResultShare * 100).toFixed(1)}%, quality recovery ${u.qualityRecoveryMs}ms\n`,
  );
  const figures = {
    baseline: 'the uncoordinated run (every service degrading on its own) of the same scenario in the same run',
    baselineRate,
    ...(coordinated.rankingLoadFactorAtDefaultRate !== undefined ? { rankingLoadFactorAtDefaultRate: coordinated.rankingLoadFactorAtDefaultRate } : {}),
    peak: coordinated.profile.peak,
    featuresDocsPerSecond: coordinated.featuresDocsPerSecond,
    coordinated: c,
    uncoordinated: u,
    noResultShareReduction: u.meanNoResultShare - c.meanNoResultShare,
    qualityLossRatio: u.maxQualityLoss > 0 ? c.maxQualityLoss / u.maxQualityLoss : null,
  };
  const targets = {
    coordinatedMaxStateIndex: { value: states.indexOf(c.maxState ?? ''), min: 2 },
    coordinatedFinalStateIndex: { value: states.indexOf(c.finalState ?? ''), max: 0 },
    coordinatedMaxNoResultShare: { value: c.maxNoResultShare, max: coordinated.lattice.qualityTarget.maxNoResultShare },
    coordinatedMaxNdcgLoss: { value: c.maxQualityLoss, max: coordinated.lattice.qualityTarget.maxNdcgLoss },
    // Against the same-run baseline: coordination must lose at most half the quality the uncoordinated run
    // loses, and leave at least 10 points fewer requests without results (a lattice that did nothing fails both).
    qualityLossRatio: { value: figures.qualityLossRatio ?? Number.NaN, max: 0.5 },
    noResultShareReduction: { value: figures.noResultShareReduction, min: 0.1 },
  };
  process.stdout.write(`${JSON.stringify({ bench: 'capacity', figures, targets })}\n`);
}
