/**
 * Names that become file names or table keys (tiers, experiment ids) are
 * checked before use, so a hostile tier such as `../../etc` never reaches a path.
 */
import { InputError, LATEST_RECORD_MS, NAME_PATTERN } from '../core/index.js';

export function assertName(value: string, what: string): string {
  if (typeof value !== 'string' || !NAME_PATTERN.test(value)) {
    throw new InputError(`${what} must be a name of letters, digits, ".", "_" or "-" (at most 128), got ${JSON.stringify(value)}`);
  }
  return value;
}

/** A record's time must name an hour bucket and an ISO date: from the epoch to the end of year 9999. */
export function assertRecordTime(timeMs: number, what: string): number {
  if (!Number.isFinite(timeMs) || timeMs < 0 || timeMs > LATEST_RECORD_MS)
    throw new InputError(`${what} ${String(timeMs)} is not a time between 1970 and 9999 (epoch ms)`);
  return timeMs;
}
