/**
 * The judge as it was before issue 30 (commit e1078d7), kept unchanged as the verdict bench's same-run
 * baseline: relative effects (t/c − 1), significance from the smallest p over all looks, a first look at 2 df,
 * no allowance for serial correlation. Not part of the product.
 */
/**
 * From per-trial effects to a verdict per metric and one for the experiment.
 *
 * Per metric, the looks of the sequential design (harness/judge/sequential.ts) give
 * an estimate with the slot bias removed, a confidence-sequence interval valid
 * at every look, and an anytime p-value; Benjamini–Hochberg adjusts the
 * p-values across the judged metrics. The practical threshold then decides:
 *   - regression: significant and the estimate beyond the threshold, in the bad direction;
 *   - no change: the interval excludes a regression beyond the threshold (an equivalence test);
 *   - improvement: significant and beyond the threshold in the good direction;
 *   - inconclusive: none of these yet; no data: too little to judge (never a pass).
 * The experiment passes only when every critical metric is decided not to
 * regress and no judged metric regressed; an undecided critical metric makes
 * it `inconclusive` unless the workload says otherwise (`onInconclusive`).
 * Every verdict carries its reason in words.
 */
import { benjaminiHochberg, studentTQuantile, varianceConsistent } from '../../../harness/stats.js';
import { defaultThreshold, type MetricPolicy } from '../../../harness/metrics/metric-policy.js';
import { LookAccumulator, criticalValue, sequentialBoundary, type Boundary, type LookFit } from './sequential.js';
import type { EffectScale, TrialMetric } from '../../../harness/metrics/trial-metrics.js';
import type { Calibration } from '../../../harness/judge/calibration-result.js';

import { formatEffect } from '../../../harness/wording.js';
import { type ExperimentVerdict, type JudgeOptions, type MetricLook, type MetricVerdict, type OnInconclusive } from '../../../harness/judge/verdict.js';

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
  readonly looks: readonly MetricLook[];
}

function draftMetric(metric: string, rows: readonly TrialMetric[], options: JudgeOptions, alpha: number): Draft {
  const policy = options.policies.get(metric);
  const usable = rows.filter((r) => Number.isFinite(r.effect));
  const points = rows.reduce((s, r) => s + r.points, 0);
  const base = { metric, ...(policy ? { policy } : {}), rows, points, pValue: Number.NaN, looks: [] };
  const minPoints = options.minPoints ?? 50;
  const causes = options.noDataCauses?.length ? ` (${options.noDataCauses.join('; ')})` : '';
  if (rows.length === 0) return { ...base, noData: `no data points were collected${causes}` };
  if (!perTrialMetric(metric) && points < minPoints) return { ...base, noData: `only ${points} data point(s), fewer than the ${minPoints} needed${causes}` };
  if (usable.length < 2) {
    const undefinedEffects = rows.length - usable.length;
    const why = undefinedEffects > 0 ? `; ${undefinedEffects} trial(s) had a zero control value, which has no relative change` : '';
    return { ...base, noData: `only ${usable.length} trial(s) with a defined effect, at least 2 are needed${why}${causes}` };
  }
  const effects = usable.map((r) => r.effect);
  const signs = usable.map((r) => options.slotSigns?.get(r.trial) ?? 0);
  const n = effects.length;
  const design = options.design ?? { minTrials: n, maxTrials: n };
  // A fixed horizon is one look at the trials there are; a sequential design looks from its minimum to its maximum.
  const fixed = design.minTrials >= design.maxTrials;
  const firstLook = fixed ? n : Math.max(2, Math.min(design.minTrials, n));
  // One pass: every look from the first, the last one being the verdict's fit.
  const fits: LookFit[] = [];
  const accumulator = new LookAccumulator();
  for (let k = 1; k <= n; k++) {
    accumulator.add(effects[k - 1]!, signs[k - 1]!);
    const look = k < firstLook ? undefined : accumulator.fit();
    if (look) fits.push(look);
  }
  const fit = fits.at(-1);
  if (!fit || fit.n !== n)
    return { ...base, noData: `${n} trial(s) leave no degree of freedom for the noise once the slot bias is fitted; at least 3 are needed` };
  const slotted = fit.slotBias !== undefined;
  const boundary = sequentialBoundary(
    fixed ? { minTrials: n, maxTrials: n, slotted } : { minTrials: Math.min(design.minTrials, n), maxTrials: Math.max(design.maxTrials, n), slotted },
  );
  const looks = fits.map((look): MetricLook => {
    const half = criticalValue(boundary, alpha, look.df) * look.standardError;
    return { trials: look.n, estimate: look.estimate, low: look.estimate - half, high: look.estimate + half };
  });
  const minQ = Math.min(1, ...fits.map((look) => look.q));
  return { ...base, fit, boundary, pValue: boundary.anytimeP(minQ), looks };
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

  const judged = drafts.filter((d) => d.policy && !d.noData);
  const adjusted = benjaminiHochberg(judged.map((d) => d.pValue));
  const adjustedOf = new Map(judged.map((d, i) => [d.metric, adjusted[i]!]));
  // Multiplicity for planning: a lone regression among m judged metrics must reach p ≤ α/m under BH.
  const planningLevel = alpha / Math.max(1, judged.length);
  const metrics = drafts.map((d) =>
    metricVerdict(d, { alpha, planningLevel, adjustedP: adjustedOf.get(d.metric) ?? Number.NaN, calibration: options.calibration }),
  );
  return experimentVerdict(metrics, {
    alpha,
    trials: trialCount,
    design: options.design ?? { minTrials: trialCount, maxTrials: trialCount },
    onInconclusive: options.onInconclusive ?? 'inconclusive',
  });
}

interface VerdictContext {
  readonly alpha: number;
  readonly planningLevel: number;
  readonly adjustedP: number;
  readonly calibration: Calibration | undefined;
}

function metricVerdict(d: Draft, ctx: VerdictContext): MetricVerdict {
  const first = d.rows[0];
  const scale: EffectScale = first?.scale ?? (d.metric.startsWith('error_share') ? 'absolute' : 'relative');
  const fmt = (v: number): string => formatEffect(v, scale);
  const fit = d.fit;
  const n = fit?.n ?? 0;
  const half = fit && d.boundary ? criticalValue(d.boundary, ctx.alpha, fit.df) * fit.standardError : Number.NaN;
  const estimate = fit?.estimate ?? Number.NaN;
  const low = estimate - half;
  const high = estimate + half;
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
  const planningCritical = fit && d.boundary ? criticalValue(d.boundary, ctx.planningLevel, fit.df) : Number.NaN;
  const powerQuantile = fit ? studentTQuantile(0.8, Math.max(1, fit.df)) : Number.NaN;
  const mde = fit ? Math.max(threshold, planningCritical * fit.standardError) + powerQuantile * fit.standardError : Number.NaN;
  const noiseFloor =
    calibrated && n >= 2 ? Math.max(threshold, (planningCritical * calibrated.sd) / Math.sqrt(n)) + (powerQuantile * calibrated.sd) / Math.sqrt(n) : undefined;
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
    sd: fit?.sd ?? Number.NaN,
    minimumDetectableEffect: mde,
    ...(noiseFloor !== undefined ? { noiseFloor } : {}),
    ...(fit?.slotBias !== undefined ? { slotBias: fit.slotBias } : {}),
    df: fit?.df ?? 0,
    noise: fit?.noise ?? ('own trials' as const),
    looks: d.looks,
  };
  if (d.noData || !fit) return { ...base, decided: false, verdict: 'no data', reason: `no data: ${d.noData ?? 'no fit'}` };
  const prefix = d.policy ? '' : 'reported, not judged (no check names it); ';
  const p = d.policy ? ctx.adjustedP : d.pValue;
  const pText = `${d.policy ? 'adjusted ' : ''}p = ${p.toPrecision(2)}`;
  const noiseText = fit.noise === 'exact (no variation)' ? ', the same in every trial' : '';
  const noisier =
    calibrated && calibrated.df >= 1 && fit.noise === 'own trials' && !varianceConsistent(fit.sd, fit.df + 1, calibrated.sd, calibrated.df)
      ? ` Noisier than the A/A calibration (sd ${fmt(fit.sd).replace(/^[+−±]/, '')} vs ${fmt(calibrated.sd).replace(/^[+−±]/, '')}): the calibration may be stale.`
      : '';
  const interval = `${fmt(estimate)} [${fmt(low)}, ${fmt(high)}] over ${n} trials${noiseText}`;
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
      reason: `${prefix}regression: ${interval}; significant (${pText} < ${ctx.alpha}) and beyond the ${fmt(badUp && estimate > 0 ? threshold : -threshold)} threshold.${noisier}`,
    };
  if (improved)
    return {
      ...base,
      decided: true,
      verdict: 'improvement',
      reason: `${prefix}improvement: ${interval}; significant (${pText} < ${ctx.alpha}) and beyond the threshold in the good direction`,
    };
  if (excludesRegression) {
    const bound = direction === 'either' ? `within ±${fmt(threshold).slice(1)}` : badUp ? `below ${fmt(threshold)}` : `above ${fmt(-threshold)}`;
    return { ...base, decided: true, verdict: 'no change', reason: `${prefix}no change: ${interval} lies ${bound}${smaller}.${noisier}` };
  }
  // Undecided: say what cannot be excluded, and what would decide it.
  const worst = badUp && (!badDown || high >= -low) ? `a regression up to ${fmt(high)}` : `a regression down to ${fmt(low)}`;
  const gap = Math.abs(estimate) >= threshold ? Math.abs(estimate) : threshold - Math.abs(estimate);
  const needed = gap > 0 ? Math.ceil((((planningCritical + powerQuantile) * fit.sd) / gap) ** 2) : Number.POSITIVE_INFINITY;
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
  ctx: { alpha: number; trials: number; design: ExperimentVerdict['design']; onInconclusive: OnInconclusive },
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
        `${m.metric}: ${formatEffect(m.estimate, m.scale)} [${formatEffect(m.low, m.scale)}, ${formatEffect(m.high, m.scale)}] lies beyond its ${formatEffect(m.policy!.direction === 'decrease-is-bad' ? -m.policy!.threshold : m.policy!.threshold, m.scale)} threshold but is not significant once ${judged.length} judged metrics are accounted for (adjusted p = ${m.adjustedP.toPrecision(2)}); a regression cannot be excluded`,
    ),
  ];
  const common = { alpha: ctx.alpha, trials: ctx.trials, design: ctx.design, undecided, metrics };
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
