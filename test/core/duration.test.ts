import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../core/index.js';

describe('durations', () => {
  it('parses human durations to milliseconds', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('4h')).toBe(14_400_000);
    expect(parseDuration('7d')).toBe(604_800_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1.5s')).toBe(1_500);
    expect(parseDuration('0s')).toBe(0);
  });

  it('rejects what is not a duration', () => {
    for (const bad of ['', '-5s', '5', 's', '5 s', '5sec', '1h-30m', 'NaN', '5S', '+5s']) expect(parseDuration(bad)).toBeUndefined();
  });

  it('formats milliseconds back to the shortest exact form', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(90_000)).toBe('1m30s');
    expect(formatDuration(14_400_000)).toBe('4h');
    expect(formatDuration(1_250)).toBe('1s250ms');
    for (const ms of [1, 999, 61_001, 86_400_000 + 1]) expect(parseDuration(formatDuration(ms))).toBe(ms);
  });
});
