/**
 * How the judge's numbers read in words: p-values, effects and joined sentences. Shared by the judge's reasons and
 * every report, so a figure reads the same wherever it appears; nothing here decides anything.
 */
import type { EffectScale } from './metrics/trial-metrics.js';

/** A p-value as a reader takes it: "= 0.034", or "< 0.001" (never "= 0.0", which reads as impossible). */
export function formatP(p: number): string {
  if (!Number.isFinite(p)) return '= n/a';
  return p < 0.001 ? '< 0.001' : `= ${p.toPrecision(2)}`;
}

/** Sentences joined into one: each ends with its own full stop, so none gets a second mark (no "threshold.; final check"). */
export function joinSentences(sentences: readonly string[]): string {
  return sentences
    .map((s) => s.trim().replace(/[.;]+$/, ''))
    .filter((s) => s !== '')
    .join('; ');
}

/** "+3.1%" on a relative scale, "+0.40 pp" on an absolute one (shares). */
export function formatEffect(value: number, scale: EffectScale): string {
  if (!Number.isFinite(value)) return 'n/a';
  const sign = value > 0 ? '+' : value < 0 ? '−' : '±';
  return scale === 'relative' ? `${sign}${Math.abs(value * 100).toFixed(2)}%` : `${sign}${Math.abs(value * 100).toFixed(2)} pp`;
}
