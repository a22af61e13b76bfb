/** Parsers for command-line values; each failure is a UsageError naming the flag and the value. */
import { MAX_DURATION_MS, MAX_TIMER_TEXT, formatDuration, parseDuration } from '../core/duration.js';
import { MAX_TIMER_MS } from '../core/clock.js';
import { UsageError } from '../core/errors.js';

/** `8080`, `:8080`, `127.0.0.1:8080`, `[::1]:8080`; the host defaults to 127.0.0.1. */
export function parseListen(text: string, flag: string): { host: string; port: number } {
  const match = /^(?:(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]*):)?(\d{1,5})$/.exec(text.trim());
  const port = Number(match?.[2]);
  if (!match || port > 65_535) throw new UsageError(`${flag} must be [HOST]:PORT or PORT, got ${JSON.stringify(text)}`);
  const host = match[1] === undefined || match[1] === '' ? '127.0.0.1' : match[1].replace(/^\[|\]$/g, '');
  return { host, port };
}

/** A sampling rate in (0, 1]. */
export function parseRate(text: string, flag: string): number {
  const rate = Number(text);
  if (!(rate > 0 && rate <= 1)) throw new UsageError(`${flag} must be a share of requests in (0, 1] such as 0.0001, got ${JSON.stringify(text)}`);
  return rate;
}

export function parseDurationFlag(text: string, flag: string): number {
  const ms = parseDuration(text);
  if (ms === undefined)
    throw new UsageError(
      `${flag} must be a duration like 30s, 4h or 7d (at most ${formatDuration(MAX_DURATION_MS)}, 15 digits per number), got ${JSON.stringify(text.slice(0, 60))}`,
    );
  return ms;
}

/** A duration something waits for (a timeout, a window, a period): at most what a timer holds. */
export function parseTimerDurationFlag(text: string, flag: string, positive = false): number {
  const ms = positive ? parsePositiveDurationFlag(text, flag) : parseDurationFlag(text, flag);
  if (ms > MAX_TIMER_MS) throw new UsageError(`${flag} must be at most ${MAX_TIMER_TEXT}, got ${JSON.stringify(text.slice(0, 60))}`);
  return ms;
}

/** A duration that must be longer than 0 (a period, a budget). */
export function parsePositiveDurationFlag(text: string, flag: string): number {
  const ms = parseDurationFlag(text, flag);
  if (ms <= 0) throw new UsageError(`${flag} must be longer than 0, got ${JSON.stringify(text)}`);
  return ms;
}

export function parsePositiveInteger(text: string, flag: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`${flag} must be a whole number >= 1, got ${JSON.stringify(text)}`);
  return value;
}

/** A finite number > 0, e.g. a rate; `unit` names what it counts in the message. */
export function parsePositiveNumber(text: string, flag: string, unit: string): number {
  const value = Number(text);
  if (!(value > 0) || !Number.isFinite(value)) throw new UsageError(`${flag} must be a number of ${unit} > 0, got ${JSON.stringify(text)}`);
  return value;
}
