/**
 * The open-loop schedule, as pure functions: when each pair is due, which
 * arm goes first, and whether a send falls in the warm-up or the measurement
 * window. Send times never depend on responses (no coordinated omission).
 */
import { seededRandom } from '../core/index.js';

export type ArmName = 'control' | 'treatment';
export const ARMS: readonly ArmName[] = ['control', 'treatment'];

/** Intended send time of pair `index`, in the clock's milliseconds. */
export function intendedTime(startMs: number, ratePerSecond: number, index: number): number {
  return startMs + (index * 1000) / ratePerSecond;
}

/** Pairs that fit in a window of `durationMs` at `ratePerSecond`. */
export function pairsInWindow(ratePerSecond: number, durationMs: number): number {
  return Math.ceil((ratePerSecond * durationMs) / 1000 - 1e-9);
}

/** Which arm is sent first, pair by pair: balanced, and reproducible from the seed. */
export function firstSides(seed: number): () => ArmName {
  const random = seededRandom(seed);
  return () => (random() < 0.5 ? 'control' : 'treatment');
}

export type Phase = 'warmup' | 'measure';

export function phaseOf(intendedMs: number, startMs: number, warmupMs: number): Phase {
  // (start + offset) - start can come back a hair below the offset in floating point: the pair due exactly
  // at the end of the warm-up must not flip into it with the monotonic clock's start value.
  return intendedMs - startMs < warmupMs - 1e-6 ? 'warmup' : 'measure';
}
