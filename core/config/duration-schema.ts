/** The config's durations: human strings (`250ms`, `1h30m`) parsed to milliseconds, never silently 0. */
import { z } from 'zod';
import { MAX_DURATION_MS, MAX_TIMER_TEXT, formatDuration, parseDuration } from '../duration.js';
import { MAX_TIMER_MS } from '../clock.js';

const DURATION_PATTERN = /^(\d+(\.\d+)?(ms|s|m|h|d))+$/;

export const durationSchema = z
  .string({
    // A bare number is the usual slip: say which unit it lacks.
    error: (issue) =>
      typeof issue.input === 'number' ? `must be a duration string with a unit, like "${issue.input}s" or "${issue.input}ms", got ${issue.input}` : undefined,
  })
  .regex(DURATION_PATTERN, { error: 'must be a duration like "250ms", "30s", "5m", "4h" or "1h30m" (no sign, no spaces)' })
  .transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms !== undefined) return ms;
    // The text matched the grammar but is not a usable duration: too many digits, too long, or under 1 ms.
    ctx.issues.push({
      code: 'custom',
      input: text,
      message: `must be between 1ms and ${formatDuration(MAX_DURATION_MS)} with at most 15 digits per number, got ${JSON.stringify(text.slice(0, 40))}`,
    });
    return z.NEVER;
  });

export const positiveDurationSchema = durationSchema.refine((ms) => ms > 0, { error: 'must be longer than 0' });

/** A duration something waits for (a timer): at most MAX_TIMER_MS, said in the message. */
const withinTimer = { error: `must be at most ${MAX_TIMER_TEXT}` };
export const timerDurationSchema = durationSchema.refine((ms) => ms <= MAX_TIMER_MS, withinTimer);
export const positiveTimerDurationSchema = positiveDurationSchema.refine((ms) => ms <= MAX_TIMER_MS, withinTimer);
