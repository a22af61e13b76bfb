import { describe, expect, it, onTestFinished } from 'vitest';
import { scoreItems, scorerCorpus, scoringSteps, startFeatureStore, startScorer, userVector } from '../../examples/scorer/index.js';

describe('the plain scoring service (the benches’ service Tandem was not tuned on)', () => {
  it('answers a recorded request with its top k, calling its feature store once, and refuses a bad body', async () => {
    const features = await startFeatureStore({ delayMs: 0 });
    onTestFinished(() => features.close());
    const scorer = await startScorer({ port: 0, featuresUrl: features.url, work: 1 });
    onTestFinished(() => new Promise<void>((resolve) => scorer.server.close(() => resolve())));
    const record = scorerCorpus(1, { seed: 3 })[0]!;
    const body = Buffer.from(record.body!, 'base64').toString('utf8');
    const answer = await fetch(`${scorer.url}${record.path}`, { method: record.method, headers: { 'content-type': 'application/json' }, body });
    expect(answer.status).toBe(200);
    const { top } = (await answer.json()) as { top: { id: string; score: number }[] };
    const request = JSON.parse(body) as Parameters<typeof scoreItems>[0];
    expect(top).toEqual(scoreItems(request, userVector(request.user), 1));
    expect(top).toHaveLength(10);
    expect(top.map((t) => t.score)).toEqual([...top.map((t) => t.score)].sort((a, b) => b - a));
    expect((await fetch(`${scorer.url}/score`, { method: 'POST', body: '{"user":1}' })).status).toBe(400);
    expect((await fetch(`${scorer.url}/healthz`)).status).toBe(200);
  });

  it('scales its work continuously: work=1.05 is 5% more scoring, not whole rounds rounded (+4.2%)', () => {
    expect(scoringSteps(1.05) / scoringSteps(1)).toBeCloseTo(1.05, 3);
    expect(scoringSteps(1.08) / scoringSteps(1)).toBeCloseTo(1.08, 3);
    expect(scoringSteps(2)).toBe(2 * scoringSteps(1));
    expect(scoringSteps(0.001)).toBeGreaterThan(0);
  });
});
