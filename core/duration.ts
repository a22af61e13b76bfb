/**
 * Human durations (`250ms`, `30s`, `4h`, `1h30m`, `7d`) to milliseconds.
 * Config files use these strings; code uses numbers of milliseconds.
 */
const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

/** Longest duration accepted anywhere: ten years. Longer ones are typos, and Number loses their precision. */
export const MAX_DURATION_MS = 3_650 * 86_400_000;
/**
 * Every duration something waits for (a timeout, an interval, a measurement window) is capped at what a
 * timer holds (MAX_TIMER_MS, clock.ts): Node's timers fire at once beyond it.
 */
export const MAX_TIMER_TEXT = 'about 24.8 days (2147483647ms, the longest wait a timer holds)';
/** Digits per number: beyond 15, a double no longer holds the number written. */
const MAX_DIGITS = 15;

/**
 * Parse a duration, or return undefined when the text is not one: not the
 * grammar, a number of more than 15 digits, longer than MAX_DURATION_MS, or
 * a non-zero duration shorter than 1 ms (it would round to 0). Never negative.
 */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  let total = 0;
  let nonZero = false;
  PART.lastIndex = 0;
  while (PART.lastIndex < trimmed.length) {
    const start = PART.lastIndex;
    const match = PART.exec(trimmed);
    if (!match || match.index !== start) return undefined;
    if (match[1]!.replace('.', '').length > MAX_DIGITS) return undefined;
    const value = Number(match[1]);
    nonZero ||= value > 0;
    total += value * (UNIT_MS[match[2]!] ?? Number.NaN);
  }
  if (!Number.isFinite(total) || total > MAX_DURATION_MS) return undefined;
  const ms = Math.round(total);
  return nonZero && ms === 0 ? undefined : ms;
}

/** Format milliseconds as the shortest exact human duration (`90000` → `1m30s`). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = Math.round(ms);
  let out = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms'] as const) {
    const size = UNIT_MS[unit]!;
    const count = Math.floor(rest / size);
    if (count > 0) {
      out += `${count}${unit}`;
      rest -= count * size;
    }
  }
  return out;
}
