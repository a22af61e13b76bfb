/**
 * `npm run bench -- boundary [--sequences N]`: does the judge's reported p-value hold far below α? The sequential
 * boundary is simulated once per last look from 16,000 Gaussian sequences (harness/judge/sequential.ts), and
 * Benjamini–Hochberg reads p-values down to α/m. Here fresh null sequences (other seeds; Gaussian, Student-t with
 * 3 df, and clustered trials: each arm's process at a second level with probability 0.3, a twentieth of the gap
 * within a level) run through the same looks, flips and p-value as `harness/judge/verdict.ts`, and for each x the bench
 * counts how often the smallest p-value over the looks fell below x. A valid p-value does so at most x of the time.
 *
 * Designs: the demo's (α = 0.01, looks 4..48; the boundary from the flips' first look, 12) and the default
 * (α = 0.05, looks 4..12, from 7); at x = α the share is the design's false-positive rate. Baselines in the same
 * run, on the same sequences: the judge as landed before the hold (the anytime p-value with the flips beside it)
 * and the boundary's anytime p-value alone (the judge without its flips).
 */
import { seededRandom } from '../core/index.js';
import { lookAccumulator, sequentialBoundary, signFlipP, type SequentialDesign } from '../harness/index.js';
import { flipCheckedDesign, looksBelowResolution, resolvedPValue } from '../harness/judge/flip-checked-look.js';
import { numberFlag } from './support/bench-args.js';
import { normal, studentT3, syntheticSlotSign } from './support/synthetic-experiment.js';

type Noise = 'gaussian' | 'studentT3' | 'clustered';
const NOISES: readonly Noise[] = ['gaussian', 'studentT3', 'clustered'];
const LEVELS = [0.05, 0.01, 0.005, 0.0025, 0.001, 0.0005];
const DESIGNS = [
  { name: 'demo', alpha: 0.01, minTrials: 4, maxTrials: 48 },
  { name: 'default', alpha: 0.05, minTrials: 4, maxTrials: 12 },
] as const;

/** Null trial effects of one kind, from a seeded stream (the scale is immaterial: looks and flips are scale-free). */
function nullEffects(noise: Noise, seed: number): () => number {
  const random = seededRandom(seed);
  const z = normal(random);
  if (noise === 'studentT3') return studentT3(z);
  if (noise === 'clustered') return () => (random() < 0.3 ? 1 : 0) - (random() < 0.3 ? 1 : 0) + 0.05 * z();
  return z;
}

interface Shares {
  readonly judge: number[];
  readonly beforeHold: number[];
  readonly anytimeAlone: number[];
}

function runDesign(design: (typeof DESIGNS)[number], noise: Noise, sequences: number, seed: number): Shares & { readonly from: number } {
  const judged: SequentialDesign = { minTrials: design.minTrials, maxTrials: design.maxTrials, slotted: true, serial: 'given' };
  const requested = sequentialBoundary(judged);
  const { first: from, boundary } = flipCheckedDesign(judged, design.alpha);
  const looks = looksBelowResolution(design.minTrials, design.maxTrials);
  const next = nullEffects(noise, seed);
  const counts = { judge: LEVELS.map(() => 0), beforeHold: LEVELS.map(() => 0), anytimeAlone: LEVELS.map(() => 0) };
  for (let s = 0; s < sequences; s++) {
    const accumulator = lookAccumulator('huber', { kind: 'given', rho: 0 });
    const effects: number[] = [];
    const signs: number[] = [];
    const smallest = { judge: 1, beforeHold: 1, anytimeAlone: 1 };
    for (let n = 1; n <= design.maxTrials; n++) {
      const sign = syntheticSlotSign(n - 1);
      effects.push(next());
      signs.push(sign);
      accumulator.add(effects[n - 1]!, sign);
      const look = n < design.minTrials ? undefined : accumulator.fit();
      if (!look) continue;
      // Without flips the verdict keeps the requested design's boundary at every look; with them, the flips' from theirs.
      smallest.anytimeAlone = Math.min(smallest.anytimeAlone, requested.anytimeP(look.q, n));
      const law = n >= from ? boundary : requested;
      const anytime = law.anytimeP(look.q, n);
      // Below α the verdict checks the look's flips (flip-checked-look.ts): the larger p-value is its q.
      if (anytime >= design.alpha) continue;
      const flip = signFlipP(effects, signs);
      const beforeHold = Math.max(law.anytimeP(Math.max(look.q, flip), n), flip);
      smallest.beforeHold = Math.min(smallest.beforeHold, beforeHold);
      smallest.judge = Math.min(
        smallest.judge,
        resolvedPValue(beforeHold, () => flip, looks),
      );
    }
    for (const kind of ['judge', 'beforeHold', 'anytimeAlone'] as const) LEVELS.forEach((x, i) => void (smallest[kind] < x && counts[kind][i]!++));
  }
  const shares = (hits: number[]): number[] => hits.map((h) => h / sequences);
  return { from, judge: shares(counts.judge), beforeHold: shares(counts.beforeHold), anytimeAlone: shares(counts.anytimeAlone) };
}

export async function run(args: string[]): Promise<void> {
  const sequences = numberFlag(args, 'sequences', 40_000, { min: 1_000, max: 1_000_000, integer: true });
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const ratios: Record<string, Record<string, Record<string, (number | null)[]>>> = {};
  let judgeWorst = 0;
  let beforeHoldWorst = 0;
  const started = Date.now();
  for (const [d, design] of DESIGNS.entries()) {
    for (const [k, noise] of NOISES.entries()) {
      const shares = runDesign(design, noise, sequences, 7_000 + 100 * d + k);
      const ratio = (values: number[]): (number | null)[] => values.map((v, i) => (LEVELS[i]! > design.alpha ? null : Number((v / LEVELS[i]!).toFixed(2))));
      (ratios[design.name] ??= {})[noise] = { judge: ratio(shares.judge), beforeHold: ratio(shares.beforeHold), anytimeAlone: ratio(shares.anytimeAlone) };
      // Levels at or below the design's α: those are the ones its p-values are read at.
      LEVELS.forEach((x, i) => {
        if (x > design.alpha) return;
        judgeWorst = Math.max(judgeWorst, shares.judge[i]! / x);
        beforeHoldWorst = Math.max(beforeHoldWorst, shares.beforeHold[i]! / x);
      });
      // Above α the judge computes no p-value below it (it checks flips only where the look could decide).
      const row = (name: string, values: number[]): string =>
        `${name} ${values
          .map((v, i) => (LEVELS[i]! > design.alpha ? '' : `${LEVELS[i]}: ${(v / LEVELS[i]!).toFixed(2)}`))
          .filter(Boolean)
          .join(', ')}`;
      log(
        `${design.name} (α ${design.alpha}, looks ${design.minTrials}..${design.maxTrials}, the flips' first look ${shares.from}), ${noise}, ${sequences} null sequences — P(smallest p < x)/x: ${row('judge', shares.judge)} | ${row('before the hold', shares.beforeHold)} | ${row('anytime alone', shares.anytimeAlone)}`,
      );
    }
  }
  log(`${((Date.now() - started) / 1000).toFixed(0)} s`);
  const figures = {
    baseline:
      'the same looks and flips on the same sequences, the p-value as landed before the hold below 0.001 (beforeHold), and the boundary’s anytime p-value alone, without the flips (anytimeAlone)',
    sequences,
    levels: LEVELS,
    ratios,
    judgePBelowXWorstRatio: Number(judgeWorst.toFixed(2)),
    beforeHoldPBelowXWorstRatio: Number(beforeHoldWorst.toFixed(2)),
  };
  const targets = { judgePBelowXWorstRatio: { value: figures.judgePBelowXWorstRatio, max: 1 } };
  process.stdout.write(`${JSON.stringify({ bench: 'boundary', figures, targets })}\n`);
}
