/**
 * The report's note on trials whose pinned arms shared their CPUs with other work (`otherWorkOnArmCpus`, measured
 * by the replayer): the arms did not have their CPUs to themselves, which pairing cancels only as far as it does
 * the same to both arms (docs/harness.md, "Other work on the arms' CPUs is measured in every trial").
 */
import type { TrialRecord } from '../core/index.js';

/** More than this share of the arms' CPUs taken by other work is worth a reader's attention. */
export const CONTENDED_SHARE = 0.25;

/** The note for the judged trials, or undefined when none was contended (or none was measured: arms not pinned). */
export function contendedTrialsNote(used: readonly TrialRecord[]): string | undefined {
  const measured = used.flatMap((t) => (typeof t.details?.otherWorkOnArmCpus === 'number' ? [{ trial: t.index + 1, share: t.details.otherWorkOnArmCpus }] : []));
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
