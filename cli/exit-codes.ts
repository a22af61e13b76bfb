/**
 * Exit codes, mapped from error classes in this one place (README: "Exit codes").
 */
import { isBadInput } from '../core/errors.js';
import type { ExperimentRecord } from '../core/model.js';

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
  /** Judged, but a critical metric is still undecided: a regression beyond its threshold cannot be excluded (never a pass). */
  inconclusive: 5,
} as const;

export function exitCodeFor(error: unknown): number {
  if (isBadInput(error)) return ExitCode.badInput;
  return ExitCode.failure;
}

/** The exit code of a stored experiment, for every command that waits on one (run, wait, submit --wait, report). */
export function exitCodeForRecord(record: Pick<ExperimentRecord, 'status' | 'verdict'>): number {
  switch (record.status) {
    case 'passed':
    case 'completed':
      return ExitCode.ok;
    case 'regressed':
      return ExitCode.regression;
    case 'inconclusive':
      return ExitCode.inconclusive;
    case 'failed':
      // A run that ended without a verdict (a metric that must have data had too little) is not a crash.
      return record.verdict?.outcome === 'no data' ? ExitCode.noVerdict : ExitCode.failure;
    default:
      return ExitCode.failure;
  }
}

/** Several experiments (submit --wait): the worst of them, in the order regression, failure, no verdict, inconclusive. */
export function exitCodeForRecords(records: readonly Pick<ExperimentRecord, 'status' | 'verdict'>[]): number {
  const codes = new Set(records.map(exitCodeForRecord));
  for (const code of [ExitCode.regression, ExitCode.failure, ExitCode.noVerdict, ExitCode.inconclusive]) if (codes.has(code)) return code;
  return ExitCode.ok;
}
