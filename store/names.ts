/**
 * Names that become file names or table keys (tiers, experiment ids) are
 * checked before use, so a hostile tier such as `../../etc` never reaches a path.
 */
import { InputError, NAME_PATTERN } from '../core/index.js';

export function assertName(value: string, what: string): string {
  if (typeof value !== 'string' || !NAME_PATTERN.test(value)) {
    throw new InputError(`${what} must be a name of letters, digits, ".", "_" or "-" (at most 128), got ${JSON.stringify(value)}`);
  }
  return value;
}
