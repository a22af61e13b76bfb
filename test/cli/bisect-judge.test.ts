import { describe, expect, it } from 'vitest';
import { oneLineReason } from '../../cli/bisect-judge.js';

describe('a bisection step skipped as undecided', () => {
  it('says its first cause on one line and counts the rest', () => {
    const undecided = [
      'a cpu_per_request regression up to +1.73% cannot be excluded\nat this noise about 40 trials would decide it',
      'a latency_shift regression up to +2.9% cannot be excluded',
      'an rss_bytes regression up to +2.2% cannot be excluded',
    ];
    expect(oneLineReason(undecided)).toBe('a cpu_per_request regression up to +1.73% cannot be excluded (and 2 more)');
  });

  it('keeps a single cause whole, and names no cause as no verdict', () => {
    expect(oneLineReason(['a latency_shift regression up to +2.9% cannot be excluded'])).toBe('a latency_shift regression up to +2.9% cannot be excluded');
    expect(oneLineReason([])).toBe('no verdict');
    expect(oneLineReason(['  ', ''])).toBe('no verdict');
  });
});
