import { describe, expect, it } from 'vitest';
import { setFlagsFromString } from 'node:v8';
import { CROSS_ROUNDS, FEATURES, burnRows, crossFeatureRows, queryVector } from '../../examples/stack/model.js';

/** The crossing as the model defines it, written the obvious way (modulo rotation, reading the rows as given). */
function referenceCrossing(rows: readonly (readonly number[])[], query: readonly number[], rounds: number = CROSS_ROUNDS): Float32Array {
  const out = new Float32Array(rows.length * FEATURES);
  rows.forEach((features, r) => {
    for (let i = 0; i < FEATURES; i++) {
      let sum = 0;
      for (let round = 0; round < rounds; round++) for (let j = 0; j < FEATURES; j++) sum += features[j]! * query[(i + j + round) % FEATURES]!;
      out[r * FEATURES + i] = Math.round((sum / rounds + features[i]!) * 10_000) / 10_000;
    }
  });
  return out;
}

describe('crossFeatureRows (the example ranking hot loop, issue 30)', () => {
  it('gives the model output bit for bit from JSON-parsed rows of integers and of doubles alike', () => {
    // Rows as the features service sends them: JSON arrays, some all integers (small-integer arrays in V8), some doubles.
    const rows = JSON.parse(
      JSON.stringify([
        Array.from({ length: FEATURES }, (_, j) => j - 4),
        Array.from({ length: FEATURES }, (_, j) => Math.round(Math.sin(j + 1) * 10_000) / 10_000),
        Array.from({ length: FEATURES }, () => 0),
      ]),
    ) as number[][];
    const query = queryVector('search', 'shoes', 0);
    const out = new Float32Array(rows.length * FEATURES);
    const work = crossFeatureRows(rows, query, out, 0);
    expect(work).toBe(rows.length * CROSS_ROUNDS * FEATURES * FEATURES);
    expect([...out]).toEqual([...referenceCrossing(rows, query)]);
  });

  it('crosses the rounds a deployment asks for (STACK_CROSS_ROUNDS), the work counted to match', () => {
    const rows = [Array.from({ length: FEATURES }, (_, j) => (j % 5) - 2.5), Array.from({ length: FEATURES }, (_, j) => j / 3)];
    const query = queryVector('search', 'boots', 1);
    const out = new Float32Array(rows.length * FEATURES);
    const rounds = 3 * CROSS_ROUNDS + 1;
    expect(crossFeatureRows(rows, query, out, 0, rounds)).toBe(rows.length * rounds * FEATURES * FEATURES);
    expect([...out]).toEqual([...referenceCrossing(rows, query, rounds)]);
    expect([...out]).not.toEqual([...referenceCrossing(rows, query)]);
  });

  it('writes each row at offset + r·stride and leaves the rest of the output alone', () => {
    const rows = [Array.from({ length: FEATURES }, (_, j) => j / 10), Array.from({ length: FEATURES }, (_, j) => -j / 7)];
    const query = queryVector('feed', '', 1);
    const out = new Float32Array(4 * FEATURES).fill(7);
    crossFeatureRows(rows, query, out, FEATURES, CROSS_ROUNDS, 2 * FEATURES);
    const expected = referenceCrossing(rows, query);
    expect([...out.subarray(FEATURES, 2 * FEATURES)]).toEqual([...expected.subarray(0, FEATURES)]);
    expect([...out.subarray(3 * FEATURES)]).toEqual([...expected.subarray(FEATURES)]);
    expect([...out.subarray(0, FEATURES), ...out.subarray(2 * FEATURES, 3 * FEATURES)].every((v) => v === 7)).toBe(true);
  });
});

describe('burnRows (the latency fault, issue 30)', () => {
  it('hands the hot function a packed array, as the real rows are, so a faulty build runs the same code as control', () => {
    // %HasHoleyElements is V8's own answer; the flag set at run time applies to functions compiled after it.
    setFlagsFromString('--allow-natives-syntax');
    const holey = new Function('array', 'return %HasHoleyElements(array)') as (array: unknown) => boolean;
    const row = Array.from({ length: FEATURES }, (_, j) => j / 10);
    expect(holey(new Array(3).fill(row))).toBe(true); // what the fault passed before
    // The request's own rows, in turn.
    const real = JSON.parse(JSON.stringify([row, row.map((v) => v + 1), row.map((v) => v + 2)])) as number[][];
    const rows = burnRows(real, 7);
    expect(rows).toHaveLength(7);
    expect(rows.map((r) => real.indexOf(r as number[]))).toEqual([0, 1, 2, 0, 1, 2, 0]);
    expect(holey(rows)).toBe(false);
    expect(holey(real)).toBe(false);
    expect(burnRows([], 3)).toEqual([]);
  });
});
