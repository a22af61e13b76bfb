/**
 * From per-trial effects to a verdict per metric and one for the experiment.
 *
 * Per metric, the looks of the sequential design (harness/judge/sequential.ts) give
 * an estimate with the slot bias removed, a confidence-sequence interval valid
 * at every look, and an anytime p-value; Benjamini–Hochberg adjusts the
 * p-values across the judged metrics that could be significant (one that moved in
 * too few trials for its sign flips to reach its share of α spends none: Tarone,
 * harness/judge/tested-family.ts). The practical threshold then decides:
 *   - regression: significant and the estimate beyond the threshold, in the bad direction;
 *   - no change: the interval excludes a regression beyond the threshold (an equivalence test);
 *   - improvement: significant and beyond the threshold in the good direction;
 *   - inconclusive: none of these yet; no data: too little to judge (never a pass).
 * The experiment passes only when every critical metric is decided not to
 * regress and no judged metric regressed; an undecided critical metric makes
 * it `inconclusive` unless the workload says otherwise (`onInconclusive`).
 * Every verdict carries its reason in words.
 */
import { studentTQuantile, varianceConsistent } from '../stats.js';
import { defaultThreshold, type MetricPolicy } from '../metrics/metric-policy.js';
import {
  EXACT_TOLERANCE,
  MIN_DF,
  criticalValue,
  lookAccumulator,
  nominalP,
  plannedStandardError,
  sequentialBoundary,
  type Boundary,
  type LookFit,
  type SequentialDesign,
  type SerialCorrelation,
} from './sequential.js';
import type { EffectScale, TrialMetric } from '../metrics/trial-metrics.js';
import { isMaterialAutocorrelation, type Calibration, type MetricCalibration } from './calibration-result.js';
import { fromInference, toInference } from '../metrics/effect-scale.js';
import { equivalenceChecked, flipCheckedDesign, looksBelowResolution, resolvedPValue, significanceChecked } from './flip-checked-look.js';
import { fewestTrialsForFlips, signFlipP, smallestSignFlipP } from './sign-flip.js';
import { testedFamily } from './tested-family.js';
import { meanChecked } from './mean-checked-look.js';
import { formatEffect, formatP } from '../wording.js';
import type { ExperimentVerdict, JudgeOptions, MetricLook, MetricVerdict, OnInconclusive } from './verdict-types.js';

export type { ExperimentOutcome, ExperimentVerdict, JudgeOptions, MetricLook, MetricVerdict, MetricVerdictKind, OnInconclusive } from './verdict-types.js';

const average = (values: readonly number[]): number => (values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length);

/**
 * Metrics from paired records (latency, errors, bytes) need `minPoints` records; the others are one value per
 * arm per trial (a process's CPU and memory, scraped counters and gauges): the trial count is their data.
 */
const perTrialMetric = (metric: string): boolean => !/^(latency_|error_share|bytes_mean$)/.test(metric);

interface Draft {
  readonly metric: string;
  readonly policy?: MetricPolicy;
  readonly rows: readonly TrialMetric[];
  readonly points: number;
  readonly noData?: string;
  readonly fit?: LookFit;
  readonly boundary?: Boundary;
  readonly pValue: number;
  /** The smallest p-value its trials could give, whatever their signs (1 when no trial moved; 0 where the flips do not check it). */
  readonly smallestP: number;
  readonly looks: readonly MetricLook[];
}

function draftMetric(metric: string, rows: readonly TrialMetric[], options: JudgeOptions, alpha: number): Draft {
  const policy = options.policies.get(metric);
  const scale: EffectScale = rows[0]?.scale ?? 'relative';
  const usable = rows.filter((r) => Number.isFinite(toInference(r.effect, r.scale)));
  const points = rows.reduce((s, r) => s + r.points, 0);
  const base = { metric, ...(policy ? { policy } : {}), rows, points, pValue: Number.NaN, smallestP: 0, looks: [] };
  const minPoints = options.minPoints ?? 50;
  const causes = options.noDataCauses?.length ? ` (${options.noDataCauses.join('; ')})` : '';
  if (rows.length === 0) return { ...base, noData: `no data points were collected${causes}` };
  if (!perTrialMetric(metric) && points < minPoints) return { ...base, noData: `only ${points} data point(s), fewer than the ${minPoints} needed${causes}` };
  if (usable.length < 2) {
    const undefinedEffects = rows.length - usable.length;
    const why = undefinedEffects > 0 ? `; ${undefinedEffects} trial(s) had a zero control value, which has no relative change` : '';
    return { ...base, noData: `only ${usable.length} trial(s) with a defined effect, at least 2 are needed${why}${causes}` };
  }
  const effects = usable.map((r) => toInference(r.effect, r.scale));
  const signs = usable.map((r) => options.slotSigns?.get(r.trial) ?? 0);
  const n = effects.length;
  const design = options.design ?? { minTrials: n, maxTrials: n };
  // Serial correlation: the A/A calibration's when it measured a material one (over many more trials than a look
  // has), else the look's own (serialCorrelationOf). A calibration also puts a floor under the standard error
  // (withNoiseFloor).
  const calibrated = options.calibration?.metrics[metric];
  const serial = options.serialCorrelation ?? serialCorrelationOf(calibrated);
  // A fixed horizon is one look at the trials there are; a sequential design looks from its minimum to its maximum.
  const fixed = design.minTrials >= design.maxTrials;
  const firstLook = fixed ? n : Math.max(2, Math.min(design.minTrials, n));
  // One pass: every look from the first, the last one being the verdict's fit.
  const fits: LookFit[] = [];
  const accumulator = lookAccumulator(options.estimator, serial);
  // The trials' mean beside the M-estimate: a pass must bound what the fleet pays (mean-checked-look.ts).
  const meanLooks = options.estimator === 'mean' ? undefined : lookAccumulator('mean', serial);
  for (let k = 1; k <= n; k++) {
    accumulator.add(effects[k - 1]!, signs[k - 1]!);
    meanLooks?.add(effects[k - 1]!, signs[k - 1]!);
    const look = k < firstLook ? undefined : accumulator.fit();
    if (look) fits.push(calibrated ? withNoiseFloor(look, calibrated) : look);
  }
  const last = fits.at(-1);
  if (!last || last.n !== n) {
    const slottedNow = signs.includes(1) && signs.includes(-1) && !signs.includes(0);
    return {
      ...base,
      noData: `${n} trial(s) leave fewer than ${MIN_DF} degrees of freedom for the noise${slottedNow ? ' once the slot bias is fitted' : ''}; at least ${MIN_DF + (slottedNow ? 2 : 1)} are needed`,
    };
  }
  const slotted = last.slotBias !== undefined;
  const upTo = fixed ? n : Math.max(design.maxTrials, n);
  const requestedFrom = fixed ? n : Math.min(design.minTrials, n);
  const requested: SequentialDesign = { minTrials: requestedFrom, maxTrials: upTo, slotted, serial: serial.kind, estimator: options.estimator ?? 'huber' };
  let boundary = sequentialBoundary(requested);
  // Sign flips cannot decide a look before 2/2ⁿ falls below its level, so a sequential design spends no α on those
  // looks: from the first one they can decide, the boundary is the design's that starts there (flipCheckedDesign).
  // Earlier looks keep the requested one.
  if (!fixed && options.signFlips !== false) {
    const decidable = flipCheckedDesign(requested, alpha);
    if (decidable.first > requestedFrom && n >= decidable.first) boundary = decidable.boundary;
  }
  // The flips' p-value is exact at one look, so it is never mapped below itself (the boundary's anytime p-value
  // is for the look's t statistic, whose nominal q can be conservative: an estimated serial correlation).
  const flips = {
    effects,
    signs,
    critical: criticalValue(boundary, alpha, last),
    significant: (p: number): boolean => Math.max(p, boundary.anytimeP(p, n)) < alpha,
  };
  const flipped =
    options.signFlips === false ? last : equivalenceChecked(significanceChecked(last, flips, boundary.anytimeP(last.q, n) < alpha), flips, policy, scale);
  const fit = meanChecked(flipped, meanLooks?.fit(), flips.critical, policy, scale);
  fits[fits.length - 1] = fit;
  const looks = fits.map((look): MetricLook => {
    const half = criticalValue(boundary, alpha, look) * look.standardError;
    return {
      trials: look.n,
      estimate: fromInference(look.estimate, scale),
      low: fromInference(look.estimate - half, scale),
      high: fromInference(look.estimate + half, scale),
    };
  });
  // Significance is the current look's, in the current estimate's direction: an earlier look whose interval
  // excluded zero says nothing once the interval in hand contains it. anytimeP(q) of the current q is valid
  // whatever look it is (it is at least the p-value of the smallest q so far), down to RESOLVED_P; below it the
  // trials' flips hold it (resolvedPValue), since the boundary's simulated sequences cannot vouch for less.
  const anytime = Math.max(boundary.anytimeP(fit.q, fit.n), fit.signFlipP ?? 0);
  const checkable = options.signFlips !== false && fit.noise === 'own trials';
  // Never below what the trials' flips could give whatever their signs (2/2ᵏ over the k trials that moved): the bound
  // the family's choice rests on (tested-family.ts). A look below α is above it already (its flips were checked, and
  // the anytime p-value is above the look's q); this holds it for the looks that could not decide, and for any
  // boundary draw whose anytime p-value fell below q.
  const smallestP = checkable ? smallestSignFlipP(effects, signs) : isUnmoved(fit) ? 1 : 0;
  const resolved = checkable ? resolvedPValue(anytime, () => fit.signFlipP ?? signFlipP(effects, signs), looksBelowResolution(requestedFrom, upTo)) : anytime;
  const pValue = Math.max(resolved, smallestP);
  return { ...base, fit, boundary, pValue, smallestP, looks };
}

/** Said wherever a look's interval is given, when the trials' sign flips widened it (flip-checked-look.ts). */
function flipNote(fit: LookFit, scale: EffectScale): string {
  if (fit.signFlipWidened && fit.signFlipP !== undefined)
    return ` (widened to match the trials' sign-flip p ${formatP(fit.signFlipP)}, larger than their spread implies)`;
  if (fit.equivalenceFlipP !== undefined)
    return ` (widened to the threshold: the trials' sign flips about it give p ${formatP(fit.equivalenceFlipP)}, not enough to exclude it)`;
  if (fit.meanBound) {
    const f = (v: number): string => formatEffect(fromInference(v, scale), scale);
    return ` (widened to the threshold: the trials' mean is ${f(fit.meanBound.estimate)}, and a pass needs it within the threshold by the interval's margin too; some trials moved more than the typical one)`;
  }
  return '';
}

/**
 * The serial correlation a metric is judged with: the A/A calibration's when it measured one that is material
 * (beyond twice its standard error and above 0.1: a 40-trial run's estimate has a standard error of 0.16), and
 * otherwise the look's own estimate (bias-corrected, clamped to [0, 0.9]; the boundary is simulated with that
 * estimate inside, so it keeps its level on independent trials).
 *
 * Never an assumed zero: arms deployed afresh in every trial were judged with ρ = 0 without a calibration until
 * 2026-12-07, on the argument that they keep no state from one trial to the next, and drifting identical builds
 * were then called regressed (`aaFprNoCalibrationDrift` in the verdict bench; docs/design/judge.md §6).
 */
function serialCorrelationOf(calibrated: MetricCalibration | undefined): SerialCorrelation {
  const rho = calibrated?.autocorrelation;
  if (rho === undefined || !Number.isFinite(rho)) return { kind: 'own' };
  return isMaterialAutocorrelation(rho, calibrated!.autocorrelationSe ?? 1) ? { kind: 'given', rho: Math.min(0.9, rho) } : { kind: 'own' };
}

/**
 * A look's standard error is never below what the workload's A/A calibration says n trials of it have (its typical
 * trial's noise and serial correlation, plannedStandardError): a run of lucky trials with a small spread must not pass a change —
 * that is how a true +3% regression was passed under heavy-tailed and drifting noise. This is a floor, not
 * pooling: it only ever widens an interval and raises a p-value, so the false-positive rate the boundary keeps
 * still holds, and an experiment noisier than its calibration is judged by its own noise.
 */
function withNoiseFloor(look: LookFit, calibrated: MetricCalibration): LookFit {
  const typical = calibrated.typicalSd ?? calibrated.sd;
  if (look.noise !== 'own trials' || !(typical > 0)) return look;
  const serial = serialCorrelationOf(calibrated);
  const floor = plannedStandardError(typical, serial.kind === 'given' ? serial.rho : 0, look.n, look.slotBias !== undefined);
  if (!(floor > look.standardError)) return look;
  return { ...look, standardError: floor, q: nominalP(look.estimate, floor, look.df), calibratedFloor: true };
}

export function judge(trialMetrics: readonly TrialMetric[], options: JudgeOptions): ExperimentVerdict {
  const alpha = options.alpha ?? 0.05;
  const byMetric = new Map<string, TrialMetric[]>();
  for (const m of trialMetrics) {
    const list = byMetric.get(m.metric) ?? [];
    list.push(m);
    byMetric.set(m.metric, list);
  }
  const names = [...new Set([...byMetric.keys(), ...[...options.policies.values()].filter((p) => p.mustHaveData).map((p) => p.metric)])].sort();
  const trialCount = new Set(trialMetrics.map((m) => m.trial)).size;
  const drafts = names.map((metric) =>
    draftMetric(
      metric,
      (byMetric.get(metric) ?? []).slice().sort((a, b) => a.trial - b.trial),
      options,
      alpha,
    ),
  );

  // The family Benjamini–Hochberg adjusts over: the judged metrics that could be significant at all (tested-family.ts,
  // Tarone 1990). One that did not move in any trial, or in too few for its sign flips to reach its share of α,
  // spends none; its adjusted p-value is its own times the family's size, never significant.
  const candidates = drafts.filter((d) => d.policy && !d.noData);
  const family = testedFamily(candidates, alpha);
  const adjustedOf = new Map(candidates.map((d, i) => [d.metric, family.adjusted[i]!]));
  const counted = new Set(family.tested.map((c) => c.metric));
  // Multiplicity for planning: a lone regression among m metrics that move must reach p ≤ α/m under BH (the trials
  // to come may let a metric that cannot reach its share yet do so).
  const planningLevel = alpha / Math.max(1, candidates.filter((d) => !(d.fit && isUnmoved(d.fit))).length);
  const maxTrials = options.design?.maxTrials ?? trialCount;
  const metrics = drafts.map((d) =>
    metricVerdict(d, {
      maxTrials,
      alpha,
      planningLevel,
      adjustedP: adjustedOf.get(d.metric) ?? Number.NaN,
      counted: counted.has(d.metric),
      calibration: options.calibration,
    }),
  );
  return experimentVerdict(metrics, {
    alpha,
    tested: family.size,
    trials: trialCount,
    design: options.design ?? { minTrials: trialCount, maxTrials: trialCount },
    onInconclusive: options.onInconclusive ?? 'inconclusive',
  });
}

/** A look whose every trial had exactly no effect: its p-value is 1 by construction (look-fit.ts, nominalP). */
const isUnmoved = (fit: LookFit): boolean => fit.noise === 'exact (no variation)' && Math.abs(fit.estimate) <= EXACT_TOLERANCE;

interface VerdictContext {
  readonly maxTrials: number;
  readonly alpha: number;
  readonly planningLevel: number;
  readonly adjustedP: number;
  readonly counted: boolean;
  readonly calibration: Calibration | undefined;
}

function metricVerdict(d: Draft, ctx: VerdictContext): MetricVerdict {
  const first = d.rows[0];
  const scale: EffectScale = first?.scale ?? (d.metric.startsWith('error_share') ? 'absolute' : 'relative');
  const fmt = (v: number): string => formatEffect(v, scale);
  const fit = d.fit;
  const n = fit?.n ?? 0;
  const half = fit && d.boundary ? criticalValue(d.boundary, ctx.alpha, fit) * fit.standardError : Number.NaN;
  const logEstimate = fit?.estimate ?? Number.NaN;
  const estimate = fromInference(logEstimate, scale);
  const low = fromInference(logEstimate - half, scale);
  const high = fromInference(logEstimate + half, scale);
  const policy = d.policy ?? {
    metric: d.metric,
    direction: d.metric.startsWith('latency') || d.metric.startsWith('error_share') ? ('increase-is-bad' as const) : ('either' as const),
    threshold: defaultThreshold(d.metric, scale),
    critical: false,
    mustHaveData: false,
  };
  const { threshold, direction } = policy;
  const calibrated = ctx.calibration?.metrics[d.metric];
  // What this rule can see at n trials: significance at the planning level, then the threshold, with 80% power.
  const planningCritical = fit && d.boundary ? criticalValue(d.boundary, ctx.planningLevel, fit) : Number.NaN;
  const powerQuantile = fit ? studentTQuantile(0.8, Math.max(1, fit.df)) : Number.NaN;
  // On the inference scale (log for ratios), then back: the rule needs the estimate beyond the threshold.
  const logThreshold = toInference(threshold, scale);
  const mde = fit ? fromInference(Math.max(logThreshold, planningCritical * fit.standardError) + powerQuantile * fit.standardError, scale) : Number.NaN;
  const forecast =
    fit && fit.noise === 'own trials' && d.policy && fit.standardError > 0
      ? forecastOf(fit, {
          critical: planningCritical + powerQuantile,
          threshold: logThreshold,
          scale,
          maxTrials: Math.max(ctx.maxTrials, n),
          fewest: d.boundary ? fewestTrialsForFlips(d.boundary.nominalLevel(ctx.planningLevel, n)) : 0,
        })
      : undefined;
  const calibratedSe =
    calibrated && n >= 2
      ? plannedStandardError(calibrated.sd, ((s) => (s.kind === 'given' ? s.rho : 0))(serialCorrelationOf(calibrated)), n, fit?.slotBias !== undefined)
      : undefined;
  const noiseFloor =
    calibratedSe !== undefined ? fromInference(Math.max(logThreshold, planningCritical * calibratedSe) + powerQuantile * calibratedSe, scale) : undefined;
  const base = {
    metric: d.metric,
    unit: first?.unit ?? '',
    scale,
    judged: d.policy !== undefined,
    ...(d.policy ? { policy: d.policy } : {}),
    control: average(d.rows.map((r) => r.control).filter(Number.isFinite)),
    treatment: average(d.rows.map((r) => r.treatment).filter(Number.isFinite)),
    trials: n,
    points: d.points,
    estimate,
    low,
    high,
    pValue: d.pValue,
    adjustedP: ctx.adjustedP,
    counted: ctx.counted,
    sd: fit?.sd ?? Number.NaN,
    minimumDetectableEffect: mde,
    ...(noiseFloor !== undefined ? { noiseFloor } : {}),
    ...(forecast ? { forecast } : {}),
    ...(fit?.slotBias !== undefined ? { slotBias: fit.slotBias } : {}),
    df: fit?.df ?? 0,
    noise: fit?.noise ?? ('own trials' as const),
    looks: d.looks,
  };
  if (d.noData || !fit) return { ...base, decided: false, verdict: 'no data', reason: `no data: ${d.noData ?? 'no fit'}` };
  const prefix = d.policy ? '' : 'reported, not judged (no check names it); ';
  const p = d.policy ? ctx.adjustedP : d.pValue;
  const pText = `${d.policy ? 'adjusted ' : ''}p ${formatP(p)}`;
  const noiseText = fit.noise === 'exact (no variation)' ? ', the same in every trial' : '';
  const noisier =
    calibrated && calibrated.df >= 1 && fit.noise === 'own trials' && !varianceConsistent(fit.sd, fit.df + 1, calibrated.sd, calibrated.df)
      ? ` Noisier than the A/A calibration (sd ${fmt(fit.sd).replace(/^[+−±]/, '')} vs ${fmt(calibrated.sd).replace(/^[+−±]/, '')}): the calibration may be stale.`
      : '';
  const flipped = flipNote(fit, scale);
  const interval = `${fmt(estimate)} [${fmt(low)}, ${fmt(high)}] over ${n} trials${noiseText}${flipped}`;
  const significant = p < ctx.alpha;
  const badUp = direction !== 'decrease-is-bad';
  const badDown = direction !== 'increase-is-bad';
  const regressed = significant && ((badUp && estimate >= threshold) || (badDown && estimate <= -threshold));
  const improved = significant && ((!badUp && estimate >= threshold) || (!badDown && estimate <= -threshold));
  const excludesRegression = (!badUp || high < threshold) && (!badDown || low > -threshold);
  const smaller = significant ? ` (a real change, ${fmt(estimate)}, smaller than the threshold)` : '';
  if (regressed)
    return {
      ...base,
      decided: true,
      verdict: 'regression',
      reason: `${prefix}regression: ${interval}; significant (${pText}, below α = ${ctx.alpha}) and beyond the ${fmt(badUp && estimate > 0 ? threshold : -threshold)} threshold.${noisier}`,
    };
  if (improved)
    return {
      ...base,
      decided: true,
      verdict: 'improvement',
      reason: `${prefix}improvement: ${interval}; significant (${pText}, below α = ${ctx.alpha}) and beyond the threshold in the good direction`,
    };
  if (excludesRegression) {
    const bound = direction === 'either' ? `within ±${fmt(threshold).slice(1)}` : badUp ? `below ${fmt(threshold)}` : `above ${fmt(-threshold)}`;
    return { ...base, decided: true, verdict: 'no change', reason: `${prefix}no change: ${interval} lies ${bound}${smaller}.${noisier}` };
  }
  // Undecided: say what cannot be excluded, and what would decide it.
  const worst = badUp && (!badDown || high >= -low) ? `a regression up to ${fmt(high)}` : `a regression down to ${fmt(low)}`;
  const gap = Math.abs(logEstimate) >= logThreshold ? Math.abs(logEstimate) : logThreshold - Math.abs(logEstimate);
  // The standard error of one trial as this look sees it (slot factor and serial correlation included).
  const perTrialSe = fit.standardError * Math.sqrt(fit.n);
  // Never fewer than the trials whose sign flips can reach the look's level (flip-checked-look.ts).
  const fewest = d.boundary ? fewestTrialsForFlips(d.boundary.nominalLevel(ctx.planningLevel, n)) : 0;
  const needed = gap > 0 ? Math.max(fewest, Math.ceil((((planningCritical + powerQuantile) * perTrialSe) / gap) ** 2)) : Number.POSITIVE_INFINITY;
  const suggestion =
    needed > n && needed <= 1_000
      ? ` About ${needed} trials would decide it if the change is about ${fmt(estimate)}.`
      : needed > 1_000
        ? ' A change this close to the threshold needs more than 1,000 trials to decide.'
        : '';
  const floor =
    noiseFloor !== undefined && noiseFloor > 2 * threshold
      ? ` The calibrated noise at ${n} trials lets only changes beyond ${fmt(noiseFloor)} be seen reliably.`
      : '';
  return {
    ...base,
    decided: false,
    ...(needed > n && needed <= 1_000 ? { suggestedTrials: needed } : {}),
    cannotExclude: worst,
    verdict: 'inconclusive',
    reason: `${prefix}inconclusive: ${interval} (${pText}); ${worst} cannot be excluded${smaller}.${suggestion}${floor}${noisier}`,
  };
}

/**
 * A look's noise carried forward: the trials at which the interval of an unchanged build (estimate 0) would lie
 * within the threshold, (z·σ₁/threshold)² with σ₁ the standard error of one trial as this look sees it (slot term and
 * serial correlation included) and z the planning critical value plus the 80% quantile, never fewer than the trials
 * the sign flips need; and the effect the last trial resolves, z·σ₁/√max.
 */
function forecastOf(
  fit: LookFit,
  plan: { critical: number; threshold: number; scale: EffectScale; maxTrials: number; fewest: number },
): NonNullable<MetricVerdict['forecast']> {
  const perTrialSe = fit.standardError * Math.sqrt(fit.n);
  const trialsForThreshold = Math.max(plan.fewest, Math.ceil(((plan.critical * perTrialSe) / plan.threshold) ** 2));
  return {
    trialsForThreshold,
    resolvableAtMax: fromInference((plan.critical * perTrialSe) / Math.sqrt(plan.maxTrials), plan.scale),
    maxTrials: plan.maxTrials,
  };
}

/** An undecided judged metric whose interval excludes no change on the bad side with the estimate beyond its threshold. */
function visibleRegression(m: MetricVerdict): boolean {
  if (m.verdict !== 'inconclusive' || !m.policy) return false;
  const { direction, threshold } = m.policy;
  const up = direction !== 'decrease-is-bad' && m.low > 0 && m.estimate >= threshold;
  const down = direction !== 'increase-is-bad' && m.high < 0 && m.estimate <= -threshold;
  return up || down;
}

function experimentVerdict(
  metrics: readonly MetricVerdict[],
  ctx: { alpha: number; tested: number; trials: number; design: ExperimentVerdict['design']; onInconclusive: OnInconclusive },
): ExperimentVerdict {
  const judged = metrics.filter((m) => m.judged);
  const reasons: string[] = [];
  const missing = judged.filter((m) => m.verdict === 'no data' && m.policy?.mustHaveData);
  const regressions = judged.filter((m) => m.verdict === 'regression');
  const withData = judged.filter((m) => m.verdict !== 'no data');
  // A critical metric that was measured but too little to judge (points but no verdict) is undecided, not skipped:
  // only one never measured at all (CPU of URL arms) may be absent when it need not have data.
  const undecidedCritical = judged.filter((m) => m.policy?.critical && (m.verdict === 'inconclusive' || (m.verdict === 'no data' && m.points > 0)));
  // A judged metric whose own interval shows a regression beyond its threshold, left unconfirmed only by the
  // multiple-comparison correction, is undecided too: `passed` beside "+5.2% [+0.8%, +9.7%]" would contradict
  // the report's own numbers.
  const visible = judged.filter((m) => !m.policy?.critical && visibleRegression(m));
  const undecided = [
    ...undecidedCritical.map((m) =>
      m.verdict === 'no data' ? `${m.metric}: ${m.reason}` : `${m.metric}: ${m.cannotExclude ?? 'a regression'} cannot be excluded`,
    ),
    ...visible.map(
      (m) =>
        `${m.metric}: ${formatEffect(m.estimate, m.scale)} [${formatEffect(m.low, m.scale)}, ${formatEffect(m.high, m.scale)}] lies beyond its ${formatEffect(m.policy!.direction === 'decrease-is-bad' ? -m.policy!.threshold : m.policy!.threshold, m.scale)} threshold but is not significant once ${ctx.tested} judged metrics are accounted for (adjusted p ${formatP(m.adjustedP)}); a regression cannot be excluded`,
    ),
  ];
  const common = { alpha: ctx.alpha, trials: ctx.trials, design: ctx.design, undecided, familySize: ctx.tested, metrics };
  for (const m of regressions) reasons.push(`${m.policy?.critical ? 'critical metric' : 'judged metric'} ${m.metric} regressed: ${m.reason}`);
  if (regressions.length > 0) return { ...common, outcome: 'regressed', reasons, decided: true };
  for (const m of missing) reasons.push(`${m.metric} must have data: ${m.reason}`);
  if (missing.length > 0) return { ...common, outcome: 'no data', reasons, decided: false };
  if (withData.length === 0) return { ...common, outcome: 'no data', reasons: ['no judged metric has data'], decided: false };
  // Judged metrics are significant on their BH-adjusted p-value, as in metricVerdict.
  const smallReal = withData.filter((m) => m.verdict === 'no change' && m.adjustedP < ctx.alpha);
  for (const m of smallReal) reasons.push(`${m.metric} changed significantly but less than its threshold: ${m.reason}`);
  if (undecided.length === 0) {
    const criticalCount = withData.filter((m) => m.policy?.critical).length;
    reasons.unshift(
      `every critical metric (${criticalCount}) is decided not to regress beyond its threshold and no judged metric regressed (${withData.length} judged)`,
    );
    return { ...common, outcome: 'passed', reasons, decided: true };
  }
  const statement = `undecided after ${ctx.trials} trials: ${undecided.join('; ')}`;
  if (ctx.onInconclusive === 'pass')
    return {
      ...common,
      outcome: 'passed',
      reasons: [`PASSED ONLY BECAUSE THE WORKLOAD ACCEPTS INCONCLUSIVE RESULTS (onInconclusive: pass); ${statement}`, ...reasons],
      decided: false,
      inconclusivePolicy: 'pass',
    };
  if (ctx.onInconclusive === 'fail')
    return {
      ...common,
      outcome: 'regressed',
      reasons: [`failed because the workload treats inconclusive results as failures (onInconclusive: fail); ${statement}`, ...reasons],
      decided: false,
      inconclusivePolicy: 'fail',
    };
  return { ...common, outcome: 'inconclusive', reasons: [statement, ...reasons], decided: false };
}
