import { describe, expect, it } from 'vitest';
import { seededRandom, systemClock, type Clock } from '../../core/index.js';
import { Sampler } from '../../recorder/index.js';

function manualClock(start = 0): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => now, monotonic: () => now, sleep: () => new Promise(() => undefined), advance: (ms) => (now += ms) };
}

/** Two-sided binomial interval at 99.9% by the normal approximation (n p (1-p) = 990 here, ample). */
function binomialInterval(n: number, p: number): [number, number] {
  const sd = Math.sqrt(n * p * (1 - p));
  return [n * p - 3.2905 * sd, n * p + 3.2905 * sd];
}

describe('sampler', () => {
  it('samples uniformly: the sampled share of 100k requests at R = 0.01 is inside the binomial 99.9% interval', () => {
    for (const seed of [1, 2, 3]) {
      const sampler = new Sampler({ rate: 0.01, clock: systemClock, random: seededRandom(seed) });
      let sampled = 0;
      for (let i = 0; i < 100_000; i++) if (sampler.sample('/x', {})) sampled++;
      const [low, high] = binomialInterval(100_000, 0.01);
      expect(sampled).toBeGreaterThanOrEqual(low);
      expect(sampled).toBeLessThanOrEqual(high);
    }
  });

  it('with a sticky key keeps or drops every request of a session together, at the configured share of sessions', () => {
    const sampler = new Sampler({ rate: 0.1, clock: systemClock, stickyKey: { header: 'X-Session' }, random: () => 0.999 });
    expect(sampler.mode).toBe('sticky');
    let kept = 0;
    for (let session = 0; session < 20_000; session++) {
      const headers = { 'x-session': `s-${session}` };
      const first = sampler.sample('/a', headers);
      for (let i = 0; i < 3; i++) expect(sampler.sample(`/b${i}`, headers)).toBe(first);
      if (first) kept++;
    }
    const [low, high] = binomialInterval(20_000, 0.1);
    expect(kept).toBeGreaterThanOrEqual(low);
    expect(kept).toBeLessThanOrEqual(high);
  });

  it('reads a sticky query parameter exactly, and falls back to uniform without the key', () => {
    const sampler = new Sampler({ rate: 0.5, clock: systemClock, stickyKey: { query: 'user' }, random: () => 0 });
    const decisions = new Map<string, boolean>();
    for (let user = 0; user < 200; user++) decisions.set(`u${user}`, sampler.sample(`/feed?a=1&user=u${user}&b=2`, {}));
    for (let user = 0; user < 200; user++) {
      expect(sampler.sample(`/other?user=u${user}`, {})).toBe(decisions.get(`u${user}`));
      expect(sampler.sample(`/other?xuser=u${user}&user=u${user}`, {})).toBe(decisions.get(`u${user}`));
    }
    expect(new Set(decisions.values()).size).toBe(2);
    expect(sampler.sample('/no-key', {})).toBe(true); // random() = 0 < rate
  });

  it('sheds by halving and recovers one doubling per interval up to the configured rate', () => {
    const clock = manualClock();
    const changes: string[] = [];
    const sampler = new Sampler({ rate: 0.01, clock, recoveryIntervalMs: 1_000, onRateChange: (rate, reason) => changes.push(`${reason} ${rate}`) });
    sampler.shed();
    sampler.shed();
    expect(sampler.effectiveRate).toBeCloseTo(0.0025, 10);
    sampler.recover(); // too soon after the last shed
    expect(sampler.effectiveRate).toBeCloseTo(0.0025, 10);
    clock.advance(1_000);
    sampler.recover();
    sampler.recover(); // same interval: no second step
    expect(sampler.effectiveRate).toBeCloseTo(0.005, 10);
    clock.advance(1_000);
    sampler.recover();
    clock.advance(1_000);
    sampler.recover();
    expect(sampler.effectiveRate).toBe(0.01);
    expect(changes).toEqual(['shed 0.005', 'shed 0.0025', 'recover 0.005', 'recover 0.01']);
    for (let i = 0; i < 50; i++) sampler.shed();
    expect(sampler.effectiveRate).toBeCloseTo(0.01 / 1024, 12);
  });

  it('refuses rates outside (0, 1]', () => {
    for (const rate of [0, -0.1, 2, Number.NaN]) expect(() => new Sampler({ rate, clock: systemClock })).toThrow(/sampling rate must be in \(0, 1\]/);
  });
});
