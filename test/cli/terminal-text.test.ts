import { describe, expect, it } from 'vitest';
import { columns, oneLine } from '../../cli/terminal-text.js';

describe('terminal text', () => {
  it('keeps a reason on one line and cuts it at a word, never mid-word', () => {
    expect(oneLine('trial 0 failed:\n  control exited (3)\n  before it was ready', 200)).toBe('trial 0 failed: control exited (3) before it was ready');
    expect(oneLine('no verdict: latency_shift had too few points to judge', 30)).toBe('no verdict: latency_shift had…');
    expect(oneLine('x'.repeat(50), 10)).toBe(`${'x'.repeat(9)}…`);
  });

  it('aligns columns to their widest cell, numbers to the right', () => {
    const lines = columns(
      ['tier', 'records', 'bytes'],
      [
        ['search', '12', '4096'],
        ['a-much-longer-tier-name', '1234567', '1'],
      ],
      new Set([1]),
    );
    expect(lines).toEqual(['tier                     records  bytes', 'search                        12  4096', 'a-much-longer-tier-name  1234567  1']);
  });
});
