/**
 * Ranking crosses as many rounds as its deployment asks for (STACK_CROSS_ROUNDS): the setting reaches the hot
 * loop, and the service's own work counter says so. `npm run bench -- paired-noise --cross-rounds N` relies on it.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { serviceConfigFromEnv, startService, startStack } from '../../examples/stack/index.js';
import { CROSS_ROUNDS, FEATURES } from '../../examples/stack/model.js';

async function workPerCandidate(env: NodeJS.ProcessEnv, urls: { features: string; gateway: string }): Promise<number> {
  const ranking = await startService('ranking', { ...serviceConfigFromEnv({ ...env, FEATURES_URL: urls.features, INFERENCE_URL: urls.gateway }), port: 0 });
  onTestFinished(() => ranking.close());
  const response = await fetch(`${ranking.urls[0]}/rank`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ surface: 'home', viewer: 7, query: 'boots', candidates: [1, 2, 3, 4], k: 2 }),
  });
  expect(response.status).toBe(200);
  const metrics = await (await fetch(`${ranking.urls[0]}/metrics`)).text();
  return Number(/^work_units_per_candidate(?:\{[^}]*\})? (\S+)$/m.exec(metrics)?.[1]);
}

describe('ranking’s rounds of feature crossing', () => {
  it('are the example’s default unless STACK_CROSS_ROUNDS sets them, and the work counted per candidate follows', async () => {
    const stack = await startStack({ shards: 1 });
    onTestFinished(() => stack.stop());
    expect(await workPerCandidate({}, stack.urls)).toBe(CROSS_ROUNDS * FEATURES * FEATURES);
    expect(await workPerCandidate({ STACK_CROSS_ROUNDS: '7' }, stack.urls)).toBe(7 * FEATURES * FEATURES);
  });
});
