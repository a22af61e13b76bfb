import { describe, expect, it } from 'vitest';
import type { RequestOutcome } from '../../core/index.js';
import { compareResponseStream, compareResponses } from '../../harness/index.js';

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64');

function outcome(arm: string, recordId: string, body: unknown, status = 200, trial = 0): RequestOutcome {
  return {
    experimentId: 'e',
    trial,
    attempt: 1,
    arm,
    recordId,
    intendedMs: 0,
    latencyMs: 1,
    status,
    bytes: 10,
    errorClass: status >= 500 ? '5xx' : '',
    bodyHash: JSON.stringify(body),
    first: arm === 'control',
    body: b64(body),
  };
}

/** Each record answered by control, control′ and treatment: `requestId` and `servedAt` are non-deterministic in every build, `score` changes only in the treatment. */
function aab(records: number, withPrime: boolean): RequestOutcome[] {
  const outcomes: RequestOutcome[] = [];
  for (let i = 0; i < records; i++) {
    const id = `r${i}`;
    const common = {
      items: [
        { id: 'a', score: 3 },
        { id: 'b', score: 2 },
        { id: 'c', score: 1 },
      ],
      meta: { model: 'v1' },
    };
    outcomes.push(outcome('control', id, { ...common, requestId: `c-${i}`, servedAt: 1000 + i }));
    if (withPrime) outcomes.push(outcome('control-prime', id, { ...common, requestId: `p-${i}`, servedAt: 2000 + i }));
    const treatmentItems =
      i % 4 === 0
        ? [
            { id: 'b', score: 2.5 },
            { id: 'a', score: 2.4 },
            { id: 'c', score: 1 },
          ]
        : common.items;
    outcomes.push(outcome('treatment', id, { ...common, items: treatmentItems, requestId: `t-${i}`, servedAt: 3000 + i }, i === 7 ? 500 : 200));
  }
  return outcomes;
}

const config = { ignoreFields: [], noiseRatio: 2, ranking: { path: 'items', id: 'id', k: 3 } };

describe('response comparison', () => {
  it('cancels fields that differ between the two controls (A/A/B) and keeps real differences', () => {
    const result = compareResponses(aab(40, true), { config });
    expect(result.noiseCancellation).toBe(true);
    expect(result.pairs).toBe(40);
    const field = (path: string) => result.fields.find((f) => f.path === path);
    expect(field('requestId')).toMatchObject({ rate: 1, noiseRate: 1, ignored: 'noise' });
    expect(field('servedAt')).toMatchObject({ rate: 1, noiseRate: 1, ignored: 'noise' });
    expect(field('items[].id')).toMatchObject({ rate: 10 / 40, noiseRate: 0, ignored: false });
    expect(field('items[].score')).toMatchObject({ rate: 10 / 40, ignored: false });
    expect(field('meta.model')).toBeUndefined();
    // Only the reordered records disagree once noise is cancelled.
    expect(result.semanticAgreement).toBeCloseTo(30 / 40, 12);
    expect(result.bodyHashAgreement).toBe(0);
    expect(result.statusMismatches).toBe(1);
    expect(result.statusExamples).toEqual([{ recordId: 'r7', control: 200, treatment: 500 }]);
  });

  it('without control′ every differing field counts, and configured ignores still apply', () => {
    const result = compareResponses(aab(40, false), { config: { ...config, ignoreFields: ['servedAt'] } });
    expect(result.noiseCancellation).toBe(false);
    expect(result.fields.find((f) => f.path === 'requestId')).toMatchObject({ ignored: false });
    expect(result.fields.find((f) => f.path === 'servedAt')).toMatchObject({ ignored: 'config' });
    expect(result.semanticAgreement).toBe(0);
  });

  it('compares ranked lists: NDCG@k, Kendall tau and overlap@k, with control′ as the no-change reference', () => {
    const result = compareResponses(aab(40, true), { config });
    const swapped = (2 + 3 / Math.log2(3) + 0.5) / (3 + 2 / Math.log2(3) + 0.5);
    expect(result.ranking!.ndcg.mean).toBeCloseTo((30 + 10 * swapped) / 40, 10);
    expect(result.ranking!.ndcg.min).toBeCloseTo(swapped, 10);
    expect(result.ranking!.kendallTau.min).toBeCloseTo(1 / 3, 10);
    expect(result.ranking!.overlap.mean).toBe(1);
    expect(result.ranking!.noise).toEqual({ ndcg: 1, kendallTau: 1, overlap: 1 });
    expect(result.ranking!.perTrialNdcg).toHaveLength(1);
  });

  it('scores rankings against labels carried in the recorded request', () => {
    const requestBodies = new Map([['r0', b64({ labels: { c: 3, a: 1 } })]]);
    const result = compareResponses(aab(1, false), { config: { ...config, ranking: { ...config.ranking, labelsPath: 'labels' } }, requestBodies });
    // treatment of r0 ranks b, a, c: gains b=0, a=1, c=7; ideal c, a
    const expected = (0 + 1 / Math.log2(3) + 7 / 2) / (7 + 1 / Math.log2(3));
    expect(result.ranking).toMatchObject({ reference: 'labels' });
    expect(result.ranking!.ndcg.mean).toBeCloseTo(expected, 10);
  });

  it('streams a large experiment trial by trial to the same comparison, holding one trial and counts per kind of difference', async () => {
    // Three trials of the A/A/B set, read back as a store streams them: trial by trial.
    const outcomes = [0, 1, 2].flatMap((trial) => aab(60, true).map((o) => ({ ...o, trial })));
    const streamed = await compareResponseStream(
      (async function* () {
        yield* outcomes;
      })(),
      { config },
    );
    const whole = compareResponses(outcomes, { config });
    expect(streamed).toEqual(whole);
    expect(streamed.pairs).toBe(180);
    // One endpoint (no request recorded): per trial 15 reordered rankings and one 500, with the first as example.
    expect(streamed.endpoints).toHaveLength(1);
    expect(streamed.endpoints[0]).toMatchObject({ pairs: 180, differing: 3 * 16, statusMismatches: 3 });
    expect(streamed.endpoints[0]!.example!.recordId).toBe('r0');
    expect(streamed.ranking!.perTrialNdcg).toHaveLength(3);
  });
});
