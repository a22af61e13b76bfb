import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../core/index.js';
import { fitLook, judge, metricPolicies, signFlipP, type TrialMetric } from '../../harness/index.js';
import { GRID, smallestSignFlipP } from '../../harness/judge/sign-flip.js';
import { SCALE_K } from '../../harness/judge/huber-looks.js';

const alternating = (n: number): number[] => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? -1 : 1));
const noSlots = (n: number): number[] => new Array<number>(n).fill(0);

function rows(metric: string, effects: readonly number[]): TrialMetric[] {
  return effects.map((effect, trial) => ({
    metric,
    trial,
    control: 100,
    treatment: 100 * (1 + effect),
    effect,
    low: Number.NaN,
    high: Number.NaN,
    points: 2,
    scale: 'relative',
    unit: 'bytes',
  }));
}

/**
 * The finding (CI, 2026-12-03 and earlier): the demo's clean change, an identical build, judged regressed on
 * rss_bytes, +4.7% [+2.4%, +6.9%] after 7 trials. A fresh process's RSS is near one of a few levels, so A/A trials
 * are about 0 or about ±11%. Here (drawn from that law: a process grown with probability 0.3, 0.5% within a
 * level) the three trials with the treatment in slot A are at +11% and the four with it in slot B at 0: the slot
 * term takes half of the jump as slot bias and half as the effect, and the residuals are the levels' own spread.
 */
const clusteredAa = [0.002, 0.111, 0, 0.111, -0.001, 0.11, -0.001];

/** The same p-value by trying every sign pattern (2ⁿ of them), for small n. */
function enumerated(noise: readonly number[]): number {
  const sizes = noise.map(Math.abs);
  const sorted = [...sizes].sort((a, b) => a - b);
  const median = sorted.length % 2 === 1 ? sorted[sorted.length >> 1]! : (sorted[(sorted.length >> 1) - 1]! + sorted[sorted.length >> 1]!) / 2;
  const steps = sizes.map((size) => Math.round((Math.min(SCALE_K, size / (1.4826 * median)) / SCALE_K) * GRID));
  const statistic = (signOf: (i: number) => number): number => Math.abs(steps.reduce((sum, a, i) => sum + signOf(i) * a, 0));
  const observed = statistic((i) => Math.sign(noise[i]!));
  let count = 0;
  for (let pattern = 0; pattern < 2 ** noise.length; pattern++) if (statistic((i) => ((pattern >> i) & 1 ? -1 : 1)) >= observed) count++;
  return count / 2 ** noise.length;
}

describe('sign-flip p-value', () => {
  it('is exact without slots: trials all one way, n of them, give 2/2ⁿ (the pattern and its mirror)', () => {
    const effects = [0.05, 0.049, 0.052, 0.051, 0.048, 0.05, 0.053, 0.047];
    expect(signFlipP(effects, noSlots(8))).toBe(2 / 256);
    expect(signFlipP(effects.slice(0, 5), noSlots(5))).toBe(2 / 32);
    // Small enough for the demo's looks (a nominal level near 3·10⁻⁴ at α = 0.01 over 48 looks) from 13 trials on.
    expect(signFlipP([...effects, ...effects.slice(0, 5)], noSlots(13))).toBe(2 / 8192);
  });

  it('computes by convolution what trying every sign pattern gives', () => {
    const random = seededRandom(5);
    for (let run = 0; run < 20; run++) {
      const noise = Array.from({ length: 10 }, () => (random() - 0.3) * (random() < 0.2 ? 0.2 : 0.03));
      expect(signFlipP(noise, noSlots(10))).toBeCloseTo(enumerated(noise), 12);
    }
  });

  it("lifts clustered A/A trials from the look's tight +5.5% to what seven lopsided trials can say", () => {
    const look = fitLook(clusteredAa, alternating(7), 7, { kind: 'given', rho: 0 })!;
    expect(look.estimate).toBeCloseTo(0.055, 2);
    expect(look.q).toBeLessThan(0.001);
    // Under no change the slot bias is the mean of the two slots' medians, +5.5%: these trials are exactly what a
    // +5.5% change with +5.5% of slot bias gives, so every trial is +5.5% of noise whose sign could have fallen
    // either way, 2/2⁷. Eight such trials, four and four, gave 2/2⁸ with the pooled median too; until 2026-12-04
    // its 0.25 here came from the odd count alone (harness/judge/sign-flip.ts). What keeps an identical build from being
    // called regressed on such trials is how rarely an A/A falls this way (the verdict bench's clustered A/A
    // rate) and, in a real workload, the correction across its judged metrics.
    expect(signFlipP(clusteredAa, alternating(7))).toBe(2 / 2 ** 7);
    expect(signFlipP([...clusteredAa, 0.11], alternating(8))).toBe(2 / 2 ** 8);
  });

  it('lets an odd look with slots reach 2/2ⁿ for a change far beyond the noise, as an even look does', () => {
    // The finding: nine trials at +10% flipped to 2/2⁸, because one median over both slots took the majority slot's
    // sign × effect (slot bias plus the change) for the bias and left its trials with no effect.
    const random = seededRandom(13);
    for (const n of [7, 8, 9, 13]) {
      const effects = Array.from({ length: n }, () => 0.1 + 0.01 * (random() - 0.5));
      expect(signFlipP(effects, alternating(n)), `${n} trials`).toBe(2 / 2 ** n);
    }
  });

  it('keeps a real effect significant once there are trials enough', () => {
    const random = seededRandom(7);
    const effects = Array.from({ length: 24 }, () => 0.04 + 0.03 * (random() - 0.5));
    expect(signFlipP(effects, alternating(24))).toBeLessThan(1e-4);
  });

  it('knows the smallest p-value the trials could give whatever their signs: 2/2ᵏ over the k that moved', () => {
    // An error share with failures in four trials of ten: however those fall, no pattern goes below 2/2⁴.
    const errors = [0, 0.005, 0, 0, -0.005, 0, 0.01, 0, 0, 0.005];
    expect(smallestSignFlipP(errors, noSlots(10))).toBe(2 / 16);
    expect(signFlipP(errors.map(Math.abs), noSlots(10))).toBe(2 / 16);
    const random = seededRandom(7);
    for (let run = 0; run < 20; run++) {
      const noise = Array.from({ length: 9 }, () => (random() < 0.5 ? 0 : (random() - 0.5) * 0.1));
      const smallest = smallestSignFlipP(noise, noSlots(9));
      expect(smallest).toBe(Math.min(1, 2 / 2 ** noise.filter((x) => x !== 0).length));
      // The trials all one way reach it; as they fell, never below it.
      if (smallest < 1) expect(signFlipP(noise.map(Math.abs), noSlots(9))).toBeCloseTo(smallest, 12);
      expect(signFlipP(noise, noSlots(9))).toBeGreaterThanOrEqual(smallest - 1e-12);
    }
    expect(smallestSignFlipP([0, 0, 0, 0], noSlots(4))).toBe(1);
  });

  it('finds nothing in trials that are all zero, or noise about zero', () => {
    expect(signFlipP([0, 0, 0, 0, 0, 0], noSlots(6))).toBe(1);
    const random = seededRandom(11);
    expect(
      signFlipP(
        Array.from({ length: 30 }, () => 0.02 * (random() - 0.5)),
        alternating(30),
      ),
    ).toBeGreaterThan(0.05);
  });
});

describe('the judge with the sign-flip check', () => {
  const policies = metricPolicies([]);
  const signs = new Map(alternating(7).map((s, i) => [i, s] as const));

  it('does not call the clustered A/A trials a regression, and says why the interval is wide', () => {
    const rss = judge(rows('rss_bytes', clusteredAa), { policies, slotSigns: signs, alpha: 0.01 }).metrics.find((m) => m.metric === 'rss_bytes')!;
    expect(rss.verdict).not.toBe('regression');
    expect(rss.low).toBeLessThanOrEqual(0);
    expect(rss.reason).toMatch(/widened to match the trials' sign-flip p = 0\.\d+, larger than their spread implies/);
    // Without the check, the finding: a regression beyond the 2% threshold.
    const unchecked = judge(rows('rss_bytes', clusteredAa), { policies, slotSigns: signs, alpha: 0.01, signFlips: false }).metrics.find(
      (m) => m.metric === 'rss_bytes',
    )!;
    expect(unchecked.verdict).toBe('regression');
  });

  it('does not pass a true +3% on clustered trials whose lopsided draw the slot term fits tightly', () => {
    // Drawn from the verdict bench's clustered law with a true +3% (a process 11% up with probability 0.3): three
    // trials at −8%, four at +3% and one at +14% split by slot read as −1.8% [−3.9%, +0.4%], inside the 2% threshold.
    // (The draw this test took until 2026-12-06, −7% three times and +14% once, no longer passes without the flips:
    // with the looks' k at 2 the +14% trial counts for more and the interval is −0.4% [−4.8%, +4.2%].)
    const effects = [-0.08, 0.031, -0.081, 0.031, 0.031, 0.14, -0.08, 0.029];
    const eight = new Map(alternating(8).map((s, i) => [i, s] as const));
    // Judged as independent trials, as it was found (without a calibration the look now also estimates its own
    // serial correlation, which widens this interval by itself; the flips are what is tested here).
    const independent = { kind: 'given', rho: 0 } as const;
    const unchecked = judge(rows('rss_bytes', effects), { policies, slotSigns: eight, signFlips: false, serialCorrelation: independent }).metrics.find(
      (m) => m.metric === 'rss_bytes',
    )!;
    // Without the flips the trials' mean (about 0, beside the M-estimate's −1.8%) now holds the pass back on its own
    // (mean-checked-look.ts); the flips are a second, independent reason.
    expect(unchecked.verdict).toBe('inconclusive');
    expect(unchecked.reason).toMatch(/the trials' mean is/);
    const rss = judge(rows('rss_bytes', effects), { policies, slotSigns: eight, serialCorrelation: independent }).metrics.find(
      (m) => m.metric === 'rss_bytes',
    )!;
    expect(rss.verdict).toBe('inconclusive');
    expect(rss.high).toBeGreaterThanOrEqual(0.02);
    // The equivalence check undoes the pass: the trials' flips about +2% (four of eight on each side) do not exclude it.
    expect(rss.reason).toMatch(/widened to the threshold: the trials' sign flips about it give p = 0\.\d+/);
  });

  it('still calls a consistent regression over enough trials, with the interval the trials give', () => {
    const effects = [0.05, 0.049, 0.052, 0.051, 0.048, 0.05, 0.053, 0.047, 0.05, 0.051];
    const ten = new Map(alternating(10).map((s, i) => [i, s] as const));
    const rss = judge(rows('rss_bytes', effects), { policies, slotSigns: ten }).metrics.find((m) => m.metric === 'rss_bytes')!;
    expect(rss.verdict).toBe('regression');
    expect(rss.low).toBeGreaterThan(0.045);
    expect(rss.reason).not.toMatch(/sign-flip/);
  });
});

describe('planning with the flips', () => {
  it('never plans fewer trials than the flips need to reach a level', async () => {
    const { fewestTrialsForFlips } = await import('../../harness/judge/sign-flip.js');
    // 2/2ⁿ below the level: 0.05 needs 6 trials (2/64), the demo's ~3·10⁻⁴ needs 13 (2/8192).
    expect(fewestTrialsForFlips(0.05)).toBe(6);
    expect(fewestTrialsForFlips(3e-4)).toBe(13);
    expect(2 / 2 ** 12).toBeGreaterThan(3e-4);
  });
});

describe('where a flip-checked design starts', () => {
  it('starts at the first look whose flips can reach the level of the design from there, and a fixed horizon at its one look', async () => {
    const { flipCheckedDesign } = await import('../../harness/judge/flip-checked-look.js');
    const { sequentialBoundary } = await import('../../harness/judge/sequential.js');
    const design = { minTrials: 4, maxTrials: 12, slotted: true, serial: 'given' as const };
    const { first, boundary } = flipCheckedDesign(design, 0.05);
    const levelFrom = (m: number): number => sequentialBoundary({ ...design, minTrials: m }).nominalLevel(0.05, m);
    expect(first).toBeGreaterThan(design.minTrials);
    expect(2 / 2 ** first).toBeLessThan(levelFrom(first));
    for (let m = design.minTrials; m < first; m++) expect(2 / 2 ** m, `look ${m}`).toBeGreaterThanOrEqual(levelFrom(m));
    expect(boundary).toBe(sequentialBoundary({ ...design, minTrials: first }));
    const fixed = flipCheckedDesign({ ...design, minTrials: 10, maxTrials: 10 }, 0.05);
    expect(fixed.first).toBe(10);
    expect(fixed.boundary).toBe(sequentialBoundary({ ...design, minTrials: 10, maxTrials: 10 }));
  });
});
