/**
 * Sequential judging of per-trial effects: one look after every completed
 * trial from `minTrials` to `maxTrials`, with a false-positive rate that holds
 * under those repeated looks.
 *
 * Each look fits the crossover model effect_i = δ + β·slot_i + ε_i (slot bias β
 * removed in every trial, balanced or not; effects on the log scale for ratios,
 * verdict.ts) by a Huber M-estimate (harness/judge/huber-looks.ts: a minority of
 * outlier trials cannot carry it) and gives a t statistic for δ, its standard error widened for
 * serial correlation between trials, with its nominal two-sided p-value q; no
 * look is taken under MIN_DF residual degrees of freedom. The design is a group-sequential test with a
 * constant nominal level (Pocock 1977; Jennison & Turnbull 2000, ch. 2): the
 * experiment rejects at the first look whose q falls below α*, where α* is set
 * so that P(min over looks of q < α*) = α under no change. Because the t
 * statistics are equivariant (their joint null law depends on neither σ nor β), the
 * looks' joint law is found once per last look by a seeded simulation of the
 * very code that judges (`LookAccumulator`), and cached; each design's law of
 * min q is read from it for its own looks. Inverting the same boundary
 * gives a confidence sequence (intervals valid simultaneously at every look)
 * and an anytime-valid p-value (Howard et al. 2021, §2; Lindon et al. 2022 use
 * the same guarantee for Netflix's sequential canaries).
 *
 * An A/A calibration is deliberately not pooled into the test: pooling its
 * noise gains degrees of freedom only when the experiment is as noisy as
 * calibrated. It gives the serial correlation when it measured a material one,
 * a floor under the standard error (verdict.ts, withNoiseFloor: it only widens),
 * and planning: the noise floor, the trials a change needs, and a warning when
 * an experiment is noisier than calibrated (docs/harness.md, Inference).
 */
import { createHash } from 'node:crypto';
import { seededRandom, treatmentSlotSign } from '../../core/index.js';
import { studentTQuantile } from '../stats.js';
import { HuberLooks } from './huber-looks.js';
import { MeanLooks } from './mean-looks.js';
import type { LookAccumulator, LookEstimator, LookFit, SerialCorrelation } from './look-fit.js';
import { chosenLawCache } from './law-cache.js';
import type { LawKey, NullLaw, SequentialDesign } from './null-law.js';

export type { LawKey, NullLaw, SequentialDesign } from './null-law.js';

export * from './look-fit.js';

/** The looks of one metric by the given estimator (the judge's is Huber's; `mean` is the bench's baseline). */
export function lookAccumulator(estimator: LookEstimator = 'huber', serial: SerialCorrelation = { kind: 'own' }): LookAccumulator {
  return estimator === 'mean' ? new MeanLooks(serial) : new HuberLooks(serial);
}

/** One look at the first `n` effects (see LookAccumulator). */
export function fitLook(
  effects: readonly number[],
  signs: readonly number[],
  n: number,
  serial?: SerialCorrelation,
  estimator: LookEstimator = 'huber',
): LookFit | undefined {
  const looks = lookAccumulator(estimator, serial);
  for (let i = 0; i < n; i++) looks.add(effects[i]!, signs[i] ?? 0);
  return looks.fit();
}

export interface Boundary {
  readonly design: SequentialDesign;
  /**
   * The nominal level of the look at n trials: its q must fall below this for the look to reject, with the
   * whole sequence kept at `level`.
   */
  nominalLevel(level: number, n: number): number;
  /** P(some look's calibrated q is at most this look's) under no change: a p-value valid however many looks were taken. */
  anytimeP(q: number, n: number): number;
}

/**
 * Sequences simulated per law: the 5% quantile of min q is then known to about ±3.5% of itself, one look's level at
 * α = 0.05 over 22 looks to about ±10% (8,000 until 2026-12-04, when one law began to serve every first look: the
 * same cost as the two laws a run then simulated, and half the variance; docs/harness.md, Inference point 7).
 */
const SIMULATIONS = 16_000;
const boundaries = new Map<string, Boundary>();
/** Laws kept per process (each about 12 MB at 48 looks): a run judges one or two designs, a bench a handful. */
const KEPT_LAWS = 8;
const laws = new Map<string, NullLaw>();

/** Standard normal deviates by Box–Muller from a seeded stream. */
function gaussian(random: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** Each look's raw q over the first `count` simulated sequences of the design's law. */
function simulatedQs(design: LawKey, seed: number, count: number): Float64Array[] {
  const z = gaussian(seededRandom(seed));
  const perLook = Array.from({ length: design.maxTrials }, () => new Float64Array(count).fill(1));
  for (let s = 0; s < count; s++) {
    const looks = lookAccumulator(design.estimator, design.serial === 'given' ? { kind: 'given', rho: 0 } : { kind: 'own' });
    for (let n = 1; n <= design.maxTrials; n++) {
      looks.add(z(), design.slotted ? treatmentSlotSign(n - 1) : 0);
      const look = looks.fit();
      if (look) perLook[n - 1]![s] = look.q;
    }
  }
  return perLook;
}

function simulateLooks(design: LawKey, seed: number): NullLaw {
  const perLook = simulatedQs(design, seed, SIMULATIONS);
  const sorted = perLook.map((qs) => qs.slice().sort());
  const calibrated = perLook.map((qs, look) => qs.map((q) => countAtMost(sorted[look]!, q) / SIMULATIONS));
  return { sorted, calibrated };
}

const lawKeyOf = (design: LawKey): string => `${design.maxTrials}|${design.slotted}|${design.serial ?? 'own'}|${design.estimator ?? 'huber'}`;

const seedOf = (design: LawKey): number => 0x5eed + design.maxTrials * 7_919 + (design.slotted ? 1 : 0) + (design.serial === 'given' ? 2 : 0);

/** A law as the judge simulates it (seeded by its key: the same law wherever it is simulated). */
export function simulatedLaw(design: LawKey): NullLaw {
  return simulateLooks(design, seedOf(design));
}

/**
 * What this code simulates for the design's first 64 sequences (the same stream simulatedLaw starts with), and the
 * text of the code that turns sequences into a law, as a digest: a law kept on disk is this code's law only while
 * its fingerprint is this (law-cache.ts). The sequences catch any change to the looks, the estimator or the seeds;
 * the text, a change to how their sorted and calibrated arrays are derived, which the sequences would not show.
 */
export function lawFingerprint(design: LawKey): string {
  const hash = createHash('sha256');
  for (const qs of simulatedQs(design, seedOf(design), 64)) hash.update(new Uint8Array(qs.buffer));
  hash.update(simulateLooks.toString()).update(countAtMost.toString());
  return hash.digest('hex');
}

const shapeOf = (design: LawKey) => ({ key: lawKeyOf(design), simulations: SIMULATIONS, fingerprint: () => lawFingerprint(design) });

/** Whether this process has the law without simulating it: kept already, or read whole from the law cache. */
export function lawAtHand(design: LawKey): boolean {
  if (laws.has(lawKeyOf(design))) return true;
  const cached = chosenLawCache()?.read(design, shapeOf(design));
  if (cached) keepLaw(design, cached);
  return cached !== undefined;
}

/** A law simulated here or in a worker, kept for this process and, where there is a cache, for the next. */
export function keepSimulatedLaw(design: LawKey, law: NullLaw): void {
  keepLaw(design, law);
  chosenLawCache()?.write(design, law, shapeOf(design));
}

/** A law simulated elsewhere (harness/judge/background-law.ts) kept for the looks of this process. */
export function keepLaw(design: LawKey, law: NullLaw): void {
  if (laws.size >= KEPT_LAWS) laws.delete(laws.keys().next().value!);
  laws.set(lawKeyOf(design), law);
}

/** Whether this process already has the law (a look would not simulate it). */
export const hasLaw = (design: LawKey): boolean => laws.has(lawKeyOf(design));

function lawOf(design: LawKey): NullLaw {
  if (lawAtHand(design)) return laws.get(lawKeyOf(design))!;
  const law = simulatedLaw(design);
  keepSimulatedLaw(design, law);
  return law;
}

/** The boundary of a design, from its law (seeded: the same design always gets the same boundary), kept per process. */
export function sequentialBoundary(design: SequentialDesign): Boundary {
  const minTrials = Math.max(2, Math.min(design.minTrials, design.maxTrials));
  const normalized: SequentialDesign = {
    minTrials,
    maxTrials: Math.max(minTrials, design.maxTrials),
    slotted: design.slotted,
    serial: design.serial ?? 'own',
    estimator: design.estimator ?? 'huber',
  };
  const key = `${normalized.minTrials}|${normalized.maxTrials}|${normalized.slotted}|${normalized.serial}|${normalized.estimator}`;
  const cached = boundaries.get(key);
  if (cached) return cached;
  // One least-squares look with a given correlation is an ordinary t-test: its level is exact, no simulation
  // needed. With its own correlation estimate or an M-estimate inside, even one look's law is simulated.
  const exactT = normalized.minTrials === normalized.maxTrials && normalized.serial === 'given' && normalized.estimator === 'mean';
  const boundary = exactT ? tTestBoundary(normalized) : designBoundary(normalized, lawOf(normalized));
  if (boundaries.size < 1_000) boundaries.set(key, boundary);
  return boundary;
}

function tTestBoundary(design: SequentialDesign): Boundary {
  return { design, nominalLevel: (level) => level, anytimeP: (q) => q };
}

function designBoundary(design: SequentialDesign, law: NullLaw): Boundary {
  const first = design.minTrials;
  const minCalibrated = new Float64Array(SIMULATIONS).fill(1);
  for (let n = first; n <= design.maxTrials; n++) {
    const calibrated = law.calibrated[n - 1]!;
    for (let s = 0; s < SIMULATIONS; s++) if (calibrated[s]! < minCalibrated[s]!) minCalibrated[s] = calibrated[s]!;
  }
  minCalibrated.sort();
  // Only the design's own looks are kept (the law's other looks and its per-sequence values are freed with it: a
  // fixed horizon at each n from 6 to 40, as the verdict bench judges, would otherwise keep 35 whole laws).
  const sorted = law.sorted.slice(first - 1, design.maxTrials);
  // Looks the simulation never took (too few degrees of freedom) borrow the nearest later look's law, and looks
  // outside the design the nearest of its own: planning asks about any n, and beyond the design's last look its
  // law is the closest there is.
  const lookAt = (n: number): Float64Array => {
    let index = Math.max(0, Math.min(sorted.length - 1, n - first));
    while (index < sorted.length - 1 && !(sorted[index]![0]! < 1)) index++;
    return sorted[index]!;
  };
  return {
    design,
    nominalLevel: (level, n) => {
      // Reject when fewer than k of the look's simulated q are at most this one's, k/S being the calibrated level.
      const k = Math.ceil(lowerQuantile(minCalibrated, level) * SIMULATIONS - 1e-9);
      return k >= 1 ? lookAt(n)[k - 1]! : 0;
    },
    anytimeP: (q, n) => (countAtMost(minCalibrated, countAtMost(lookAt(n), q) / SIMULATIONS) + 1) / (SIMULATIONS + 1),
  };
}

/** The largest value v of the sorted law with P(X < v) ≤ level. */
function lowerQuantile(sorted: Float64Array, level: number): number {
  const index = Math.floor(level * sorted.length);
  return index >= sorted.length ? 1 : sorted[index]!;
}

function countAtMost(sorted: Float64Array, value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (sorted[mid]! <= value) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** Half-width multiplier of the confidence sequence at a look of n trials: the t quantile at that look's nominal level. */
export function criticalValue(boundary: Boundary, level: number, look: { readonly n: number; readonly df: number }): number {
  return studentTQuantile(1 - boundary.nominalLevel(level, look.n) / 2, Math.max(1, look.df));
}
