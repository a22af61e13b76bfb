/**
 * What one sequential look found, as stored in a `look` event, shown on the
 * progress line of `tandem run` and in the demo.
 */
import { formatEffect } from '../harness/index.js';

export interface LookSummary {
  readonly experimentId: string;
  readonly trials: number;
  readonly decided: boolean;
  readonly outcome: string;
  readonly metrics: readonly { readonly metric: string; readonly critical: boolean; readonly verdict: string; readonly estimate: number; readonly low: number; readonly high: number; readonly scale: 'relative' | 'absolute' }[];
}

/** One line per look: each critical metric's estimate and interval, and whether the judge is done. */
export function formatLook(look: LookSummary): string {
  const critical = look.metrics.filter((m) => m.critical);
  const parts = (critical.length > 0 ? critical : look.metrics).map((m) => `${m.metric} ${formatEffect(m.estimate, m.scale)} [${formatEffect(m.low, m.scale)}, ${formatEffect(m.high, m.scale)}] ${m.verdict}`);
  return `after ${look.trials} trial(s): ${parts.join('; ')} → ${look.decided ? `decided: ${look.outcome}` : 'undecided, next trial'}`;
}
