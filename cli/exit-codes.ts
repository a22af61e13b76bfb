/**
 * Exit codes, mapped from error classes in this one place (README: "Exit codes").
 */
import { TandemError } from '../core/index.js';

export const ExitCode = {
  /** Success; for experiments: no regression. */
  ok: 0,
  /** The verdict says regression. */
  regression: 1,
  /** Cancelled, or a runtime failure (store unreachable, not implemented, crash). */
  failure: 2,
  /** Bad input: config, arguments, input files. */
  badInput: 3,
  /** The verdict could not be reached: a metric that must have data had too little (never a pass). */
  noVerdict: 4,
} as const;

const BAD_INPUT_CODES = new Set(['TANDEM_ERR_CONFIG', 'TANDEM_ERR_USAGE', 'TANDEM_ERR_INPUT']);

export function exitCodeFor(error: unknown): number {
  if (error instanceof TandemError && BAD_INPUT_CODES.has(error.code)) return ExitCode.badInput;
  return ExitCode.failure;
}
