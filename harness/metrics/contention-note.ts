/**
 * The report's notes on what the machine did to both arms alike: trials whose pinned arms shared their CPUs with
 * other work (`otherWorkOnArmCpus`, measured by the replayer), and trials where a request cost both arms far more
 * CPU than in the experiment's fastest trial. Pairing cancels what is common to both arms from the difference,
 * not from the ratio, and on a busy machine the second is what a tenant's tax looks like (docs/harness.md, "Other
 * work on the arms' CPUs is measured in every trial").
 */
import { sampleStandardDeviation } from 'simple-statistics';
import type { TrialRecord } from '../../core/index.js';
import type { TrialMetric } from './trial-metrics.js';

/** More than this share of the arms' CPUs taken by other work is worth a reader's attention. */
export const CONTENDED_SHARE = 0.25;

/** The note for the judged trials, or undefined when none was contended (or none was measured: arms not pinned). */
export function contendedTrialsNote(used: readonly TrialRecord[]): string | undefined {
  const measured = used.flatMap((t) =>
    typeof t.details?.otherWorkOnArmCpus === 'number' ? [{ trial: t.index + 1, share: t.details.otherWorkOnArmCpus }] : [],
  );
  const contended = measured.filter((m) => m.share > CONTENDED_SHARE);
  if (contended.length === 0) return undefined;
  const worst = contended.reduce((a, b) => (b.share > a.share ? b : a));
  const percent = (share: number): string => `${Math.round(share * 100)}%`;
  return (
    `other work took more than ${percent(CONTENDED_SHARE)} of the arms' CPUs in ${contended.length} of ${measured.length} judged trial(s) ` +
    `(trial${contended.length > 1 ? 's' : ''} ${contended.map((m) => m.trial).join(', ')}; the most ${percent(worst.share)}, in trial ${worst.trial}): ` +
    'pairing cancels only what that work did to both arms alike'
  );
}

/** A trial whose requests cost both arms this much more CPU than the fastest trial's is worth a reader's attention. */
export const SLOWED_RATIO = 1.25;

/** Fewest trials on each side (slowed, not) whose spread the note gives: an sd of two trials says little. */
export const MIN_SPREAD_TRIALS = 3;

/**
 * The note for the judged trials' CPU per request, or undefined when no trial was slowed. A trial's level is the
 * geometric mean of its two arms' CPU per request, so it does not depend on which arm is the treatment; the
 * reference is the fastest trial's, because nothing makes a machine run a build faster than it can. With at least MIN_SPREAD_TRIALS on each side it also gives the sd of the
 * paired effect (log ratio) in the slowed trials and in the others: on the twenty-eighth host such stretches spread
 * a trial's effect by 1.9–2.0% against 1.1–1.3% at the same rate, and the reader of a wide interval should see
 * which trials widened it.
 */
export function slowedTrialsNote(metrics: readonly Pick<TrialMetric, 'metric' | 'trial' | 'control' | 'treatment'>[]): string | undefined {
  const levels = metrics.flatMap((m) =>
    m.metric === 'cpu_per_request' && m.control > 0 && m.treatment > 0
      ? [{ trial: m.trial + 1, level: Math.sqrt(m.control * m.treatment), effect: Math.log(m.treatment / m.control) }]
      : [],
  );
  if (levels.length < 2) return undefined;
  const fastest = levels.reduce((a, b) => (b.level < a.level ? b : a));
  const slowed = levels.filter((l) => l.level >= fastest.level * SLOWED_RATIO);
  if (slowed.length === 0) return undefined;
  const slowest = slowed.reduce((a, b) => (b.level > a.level ? b : a));
  const ms = (seconds: number): string => `${(seconds * 1000).toFixed(1)} ms`;
  const others = levels.filter((l) => l.level < fastest.level * SLOWED_RATIO);
  const spread = (group: typeof levels): string => `${(sampleStandardDeviation(group.map((l) => l.effect)) * 100).toFixed(1)}%`;
  const spreads =
    slowed.length >= MIN_SPREAD_TRIALS && others.length >= MIN_SPREAD_TRIALS
      ? `; the paired effect on CPU per request had an sd of ${spread(slowed)} across them and of ${spread(others)} across the other ${others.length}`
      : '';
  return (
    `a request cost both arms ${Math.round((SLOWED_RATIO - 1) * 100)}% or more CPU than in the fastest trial (${ms(fastest.level)}, trial ${fastest.trial}) ` +
    `in ${slowed.length} of ${levels.length} judged trial(s) (up to ${ms(slowest.level)}, in trial ${slowest.trial}): the machine slowed both arms alike there; ` +
    `pairing cancels that from the difference, not from the ratio, so a change that adds a fixed amount of work measures smaller in them${spreads}`
  );
}
