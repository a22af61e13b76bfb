/**
 * A bench's command-line flags, validated: a value that is not a number in the flag's range is a usage error
 * naming the flag and what it got (bench/run.ts exits 3 on it), never a run on NaN or a silent fallback.
 * (`npm run bench -- capacity --baseline abc` ran both capacity tests at a rate of NaN and printed figures
 * of null with exit code 0.)
 */
import { UsageError } from '../../core/errors.js';

export interface FlagRange {
  readonly min: number;
  readonly max: number;
  readonly integer?: boolean;
}

/** `--name N`: the fallback when the flag is absent; otherwise N, which must be a number in the range. */
export function numberFlag(args: readonly string[], name: string, fallback: number, range: FlagRange): number {
  const at = args.indexOf(`--${name}`);
  if (at < 0) return fallback;
  const text = args[at + 1];
  // Number('') and Number(' ') are 0: an empty value is missing, not zero.
  const value = text === undefined || text.trim() === '' ? Number.NaN : Number(text);
  if (!Number.isFinite(value) || value < range.min || value > range.max || (range.integer === true && !Number.isInteger(value))) {
    throw new UsageError(
      `--${name} needs ${range.integer === true ? 'a whole number' : 'a number'} from ${range.min} to ${range.max}, got ${text === undefined ? 'nothing' : JSON.stringify(text)}`,
    );
  }
  return value;
}

const CPU_LIST = /^\d+(-\d+)?(,\d+(-\d+)?)*$/;

/** `--NAME LIST`: a CPU list as taskset takes it (digits, commas and ranges only; it goes to spawn as one argv). */
export function cpuListArg(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(`--${name}`);
  if (at < 0) return undefined;
  const list = args[at + 1] ?? '';
  if (!CPU_LIST.test(list)) throw new UsageError(`--${name} needs a CPU list like "1" or "0-1", got ${JSON.stringify(list)}`);
  return list;
}

/** `--cpus LIST`. */
export function cpuListFlag(args: readonly string[]): { cpus?: string } {
  const cpus = cpuListArg(args, 'cpus');
  return cpus !== undefined ? { cpus } : {};
}

/** `--NAME A:B`: a CPU list for each of the two slots. */
export function cpuListPairArg(args: readonly string[], name: string): readonly [string, string] | undefined {
  const at = args.indexOf(`--${name}`);
  if (at < 0) return undefined;
  const text = args[at + 1] ?? '';
  const [a, b, ...rest] = text.split(':');
  if (a === undefined || b === undefined || rest.length > 0 || !CPU_LIST.test(a) || !CPU_LIST.test(b))
    throw new UsageError(`--${name} needs two CPU lists as A:B, like "0:1", got ${JSON.stringify(text)}`);
  return [a, b];
}
