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

/** Parse a duration, or return undefined when the text is not one. Never negative. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < trimmed.length) {
    const start = PART.lastIndex;
    const match = PART.exec(trimmed);
    if (!match || match.index !== start) return undefined;
    total += Number(match[1]) * (UNIT_MS[match[2]!] ?? Number.NaN);
  }
  return Number.isFinite(total) ? Math.round(total) : undefined;
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
