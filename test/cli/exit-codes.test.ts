import { describe, expect, it } from 'vitest';
import { ExitCode, exitCodeForRecord, exitCodeForRecords } from '../../cli/exit-codes.js';

describe('exit codes of stored experiments (one mapping for run, wait, submit and report)', () => {
  it('maps every terminal status, and a run that ended without a verdict to 4, not 2', () => {
    expect(exitCodeForRecord({ status: 'passed' })).toBe(0);
    expect(exitCodeForRecord({ status: 'completed' })).toBe(0);
    expect(exitCodeForRecord({ status: 'regressed' })).toBe(1);
    expect(exitCodeForRecord({ status: 'cancelled' })).toBe(2);
    expect(exitCodeForRecord({ status: 'failed' })).toBe(2);
    expect(exitCodeForRecord({ status: 'failed', verdict: { outcome: 'no data' } })).toBe(ExitCode.noVerdict);
    expect(exitCodeForRecord({ status: 'inconclusive' })).toBe(ExitCode.inconclusive);
    expect(exitCodeForRecord({ status: 'running' })).toBe(2);
  });

  it('gives several experiments the worst of their codes', () => {
    expect(exitCodeForRecords([{ status: 'passed' }, { status: 'inconclusive' }])).toBe(5);
    expect(exitCodeForRecords([{ status: 'inconclusive' }, { status: 'regressed' }, { status: 'failed' }])).toBe(1);
    expect(exitCodeForRecords([{ status: 'passed' }, { status: 'completed' }])).toBe(0);
  });
});
