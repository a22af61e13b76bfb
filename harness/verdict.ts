/**
 * From per-trial effects to a verdict per metric and one for the experiment.
 * Across trials: a t interval of the per-trial effects; Benjamini–Hochberg
 * across the judged metrics; then the practical threshold decides — a
 * significant change beyond it is a regression or an improvement, an
 * interval inside ±threshold is no change, anything else is inconclusive
 * (with the trial count that would resolve it). Too few points is *no data*,
 * never a pass. Every verdict carries its reason in words.
 */
import { benjaminiHochberg, minimumDetectableEffect, pooledTInterval, tInterval, trialsToDetect, varianceConsistent } from './stats.js';
import { defaultThreshold, type MetricPolicy } from './metric-policy.js';
import type { EffectScale, TrialMetric } from './trial-metrics.js';
import type { Calibration } from './calibration.js';

export type MetricVerdictKind = 'regression' | 'improvement' | 'no change' | 'inconclusive' | 'no data';
export type ExperimentOutcome = 'passed' | 'regressed' | 'no data';

export interface MetricVerdict {
  readonly metric: string;
  readonly unit: string;
  readonly scale: EffectScale;
  /** False for metrics reported without a policy (their verdict is descriptive only). */
  readonly judged: boolean;
  readonly policy?: MetricPolicy;
  /** Mean over trials of each arm's value. */
  readonly control: number;
  readonly treatment: number;
  readonly trials: number;
  readonly points: number;
  /** Effect estimate across trials and its 95% interval, on the metric's scale. */
  readonly estimate: number;
  readonly low: number;
  readonly high: number;
  readonly pValue: number;
  /** Benjamini–Hochberg adjusted across the judged metrics of the experiment. */
  readonly adjustedP: number;
  /** Between-trial standard deviation of the per-trial effects. */
  readonly sd: number;
  /** Smallest change this experiment could have detected (80% power, 5% two-sided). */
  readonly minimumDetectableEffect: number;
  /** The calibrated noise floor at this trial count, when an A/A calibration exists. */
  readonly noiseFloor?: number;
  /** Slot bias removed from the estimate (calibrated, significant, trials unbalanced across slots). */
  readonly slotBiasCorrection?: number;
  /** Degrees of freedom of the interval: trials − 1, plus the calibration's when its noise estimate was pooled in. */
  readonly df: number;
  /** How the between-trial noise was estimated. */
  readonly noise: 'own trials' | 'pooled with calibration' | 'own trials (above calibration)';
  readonly suggestedTrials?: number;
  readonly verdict: MetricVerdictKind;
  readonly reason: string;
}

export interface ExperimentVerdict {
  readonly outcome: ExperimentOutcome;
  /** Share of judged metrics with data that did not regress. */
  readonly score: number;
  readonly reasons: readonly string[];
  readonly alpha: number;
  readonly trials: number;
  readonly metrics: readonly MetricVerdict[];
}

export interface JudgeOptions {
  readonly policies: ReadonlyMap<string, MetricPolicy>;
  /** @default 0.05 */
  readonly alpha?: number;
  /** @default 50 */
  readonly minPoints?: number;
  /** @default 0.75 */
  readonly passScore?: number;
  /** +1 when the treatment ran in slot A in that trial, −1 in slot B. */
  readonly slotSigns?: ReadonlyMap<number, 1 | -1>;
  readonly calibration?: Calibration;
}

/** "+3.1%" on a relative scale, "+0.40 pp" on an absolute one (shares). */
export function formatEffect(value: number, scale: EffectScale): string {
  if (!Number.isFinite(value)) return 'n/a';
  const sign = value > 0 ? '+' : value < 0 ? '−' : '±';
  return scale === 'relative' ? `${sign}${Math.abs(value * 100).toFixed(2)}%` : `${sign}${Math.abs(value * 100).toFixed(2)} pp`;
}

const isBad = (direction: MetricPolicy['direction'], effect: number): boolean =>
  direction === 'either' ? effect !== 0 : direction === 'increase-is-bad' ? effect > 0 : effect < 0;

const average = (values: readonly number[]): number => (values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length);

export function judge(trialMetrics: readonly TrialMetric[], options: JudgeOptions): ExperimentVerdict {
  const alpha = options.alpha ?? 0.05;
  const minPoints = options.minPoints ?? 50;
  const byMetric = new Map<string, TrialMetric[]>();
  for (const m of trialMetrics) {
    const list = byMetric.get(m.metric) ?? [];
    list.push(m);
    byMetric.set(m.metric, list);
  }
  const names = [...new Set([...byMetric.keys(), ...[...options.policies.values()].filter((p) => p.mustHaveData).map((p) => p.metric)])].sort();
  const trialCount = new Set(trialMetrics.map((m) => m.trial)).size;

  interface Draft {
    metric: string;
    policy?: MetricPolicy;
    rows: TrialMetric[];
    effects: number[];
    points: number;
    interval: ReturnType<typeof tInterval>;
    df: number;
    noise: MetricVerdict['noise'];
    correction?: number;
    noData?: string;
  }
  const drafts: Draft[] = names.map((metric) => {
    const rows = (byMetric.get(metric) ?? []).slice().sort((a, b) => a.trial - b.trial);
    const usable = rows.filter((r) => Number.isFinite(r.effect));
    const effects = usable.map((r) => r.effect);
    const points = rows.reduce((s, r) => s + r.points, 0);
    const policy = options.policies.get(metric);
    let noData: string | undefined;
    if (rows.length === 0) noData = 'no data points were collected';
    else if (points < minPoints) noData = `only ${points} data point(s), fewer than the ${minPoints} needed`;
    else if (effects.length < 2) noData = `only ${effects.length} trial(s) with a defined effect (a zero control value has no relative change); at least 2 are needed`;
    let interval = tInterval(effects);
    let correction: number | undefined;
    const bias = options.calibration?.metrics[metric]?.slotBias;
    if (!noData && bias && bias.pValue < alpha && options.slotSigns) {
      // With an odd trial count the crossover cannot balance slots; remove the calibrated bias that remains.
      const balance = average(usable.map((r) => options.slotSigns!.get(r.trial) ?? 0));
      if (balance !== 0) {
        correction = bias.estimate * balance;
        interval = tInterval(usable.map((r) => r.effect - bias.estimate * (options.slotSigns!.get(r.trial) ?? 0)));
      }
    }
    // The calibration measured this noise on many trials: pooling it in gives the test its degrees of
    // freedom, unless this experiment is noisier than calibrated (then its own trials are all it has).
    let df = Math.max(0, interval.n - 1);
    let noise: MetricVerdict['noise'] = 'own trials';
    const calibrated = options.calibration?.metrics[metric];
    if (!noData && calibrated && calibrated.df >= 1 && interval.n >= 2) {
      const corrected = correction !== undefined ? usable.map((r) => r.effect - bias!.estimate * (options.slotSigns!.get(r.trial) ?? 0)) : effects;
      if (varianceConsistent(interval.sd, interval.n, calibrated.sd, calibrated.df)) {
        const pooled = pooledTInterval(corrected, calibrated.sd, calibrated.df);
        interval = pooled;
        df = pooled.df;
        noise = 'pooled with calibration';
      } else noise = 'own trials (above calibration)';
    }
    return { metric, ...(policy ? { policy } : {}), rows, effects, points, interval, df, noise, ...(correction !== undefined ? { correction } : {}), ...(noData ? { noData } : {}) };
  });

  const judged = drafts.filter((d) => d.policy && !d.noData);
  const adjusted = benjaminiHochberg(judged.map((d) => d.interval.pValue));
  const adjustedOf = new Map(judged.map((d, i) => [d.metric, adjusted[i]!]));

  const metrics: MetricVerdict[] = drafts.map((d) => {
    const first = d.rows[0];
    const scale: EffectScale = first?.scale ?? (d.metric.startsWith('error_share') ? 'absolute' : 'relative');
    const { estimate, low, high, pValue, sd, n } = d.interval;
    const adjustedP = adjustedOf.get(d.metric) ?? Number.NaN;
    const mde = minimumDetectableEffect(sd, n, alpha, 0.8, Math.max(1, d.df));
    const calibrated = options.calibration?.metrics[d.metric];
    const noiseFloor = calibrated && n >= 2 ? minimumDetectableEffect(calibrated.sd, n, alpha) : undefined;
    const fmt = (v: number): string => formatEffect(v, scale);
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
      pValue,
      adjustedP,
      sd,
      minimumDetectableEffect: mde,
      ...(noiseFloor !== undefined ? { noiseFloor } : {}),
      ...(d.correction !== undefined ? { slotBiasCorrection: d.correction } : {}),
      df: d.df,
      noise: d.noise,
    };
    if (d.noData) return { ...base, verdict: 'no data' as const, reason: `no data: ${d.noData}` };
    const interval = `${fmt(estimate)} [${fmt(low)}, ${fmt(high)}] over ${n} trials${d.noise === 'pooled with calibration' ? ` (noise pooled with the A/A calibration, ${d.df} df)` : d.noise === 'own trials (above calibration)' ? ' (noisier than calibrated: judged on its own trials)' : ''}`;
    // A reported-only metric gets the same rules with a default policy and its unadjusted p-value; it never
    // decides the outcome, and its reason says so.
    const policy = d.policy ?? { metric: d.metric, direction: d.metric.startsWith('latency') || d.metric.startsWith('error_share') ? ('increase-is-bad' as const) : ('either' as const), threshold: defaultThreshold(d.metric, scale), critical: false, mustHaveData: false };
    const prefix = d.policy ? '' : 'reported, not judged (no check names it); ';
    const { threshold, direction } = policy;
    const noise = mde > threshold ? ` With this noise (between-trial sd ${fmt(sd)}) and ${n} trials, a change smaller than ${fmt(mde)} could not have been seen.` : '';
    const calibratedNote =
      noiseFloor !== undefined && noiseFloor > threshold
        ? ` The calibrated noise floor at ${n} trials (${fmt(noiseFloor)}) is wider than the ${fmt(threshold)} threshold${calibrated ? `; ${trialsToDetect(calibrated.sd, threshold, { alpha }) ?? 'more than 1000'} trials would resolve it` : ''}.`
        : '';
    const suggestedTrials = trialsToDetect(calibrated?.sd ?? sd, threshold, { alpha });
    const withSuggestion = <T extends object>(v: T): T & { suggestedTrials?: number } => (suggestedTrials !== undefined && suggestedTrials > n ? { ...v, suggestedTrials } : v);
    const significant = (d.policy ? adjustedP : pValue) < alpha;
    if (significant && Math.abs(estimate) >= threshold) {
      const bad = isBad(direction, estimate);
      return {
        ...base,
        verdict: bad ? ('regression' as const) : ('improvement' as const),
        reason: `${prefix}${bad ? 'regression' : 'improvement'}: ${interval}; significant (${d.policy ? 'adjusted ' : ''}p = ${(d.policy ? adjustedP : pValue).toPrecision(2)} < ${alpha}) and beyond the ${fmt(threshold)} threshold`,
      };
    }
    if (low > -threshold && high < threshold) {
      return { ...base, verdict: 'no change' as const, reason: `${prefix}no change: ${interval} lies within ±${fmt(threshold).slice(1)}${significant ? ' (a real but smaller change)' : ''}` };
    }
    if (significant) {
      return withSuggestion({ ...base, verdict: 'inconclusive' as const, reason: `${prefix}inconclusive: ${interval} is significant but its estimate is below the ${fmt(threshold)} threshold while the interval reaches beyond it.${noise}${calibratedNote}` });
    }
    const needed = suggestedTrials !== undefined && suggestedTrials > n ? ` About ${suggestedTrials} trials would resolve a ${fmt(threshold)} change.` : '';
    return withSuggestion({ ...base, verdict: 'inconclusive' as const, reason: `${prefix}inconclusive: ${interval} is not significant (${d.policy ? 'adjusted ' : ''}p = ${Number.isNaN(d.policy ? adjustedP : pValue) ? 'n/a' : (d.policy ? adjustedP : pValue).toPrecision(2)}) but reaches beyond ±${fmt(threshold).slice(1)}.${noise}${calibratedNote}${needed}` });
  });

  const judgedMetrics = metrics.filter((m) => m.judged);
  const reasons: string[] = [];
  const missing = judgedMetrics.filter((m) => m.verdict === 'no data' && m.policy?.mustHaveData);
  const regressions = judgedMetrics.filter((m) => m.verdict === 'regression');
  const critical = regressions.filter((m) => m.policy?.critical);
  const withData = judgedMetrics.filter((m) => m.verdict !== 'no data');
  const score = withData.length === 0 ? 0 : (withData.length - regressions.length) / withData.length;
  const passScore = options.passScore ?? 0.75;
  let outcome: ExperimentOutcome = 'passed';
  for (const m of missing) reasons.push(`${m.metric} must have data: ${m.reason}`);
  for (const m of critical) reasons.push(`critical metric ${m.metric} regressed: ${m.reason}`);
  if (regressions.length > 0 && score < passScore) reasons.push(`${regressions.length} of ${withData.length} judged metrics regressed (score ${score.toFixed(2)} < ${passScore})`);
  if (critical.length > 0 || (regressions.length > 0 && score < passScore)) outcome = 'regressed';
  else if (missing.length > 0 || withData.length === 0) {
    outcome = 'no data';
    if (withData.length === 0 && missing.length === 0) reasons.push('no judged metric has data');
  } else {
    reasons.push(regressions.length === 0 ? `no judged metric regressed (${withData.length} judged)` : `${regressions.length} non-critical regression(s), score ${score.toFixed(2)} >= ${passScore}`);
  }
  return { outcome, score, reasons, alpha, trials: trialCount, metrics };
}
