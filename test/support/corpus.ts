import { randomUUID } from 'node:crypto';
import type { CorpusRecord } from '../../core/index.js';
import { candidateSet } from '../../examples/stack/model.js';
import { SURFACES, productionRequest } from '../../examples/stack/index.js';

/** Recorded requests of the example stack's ranking tier (POST /rank), as the recorder would store them. */
export function rankingCorpus(count: number, options: { tier?: string; timeMs?: number; seed?: number } = {}): CorpusRecord[] {
  return Array.from({ length: count }, (_, i) => {
    const request = productionRequest(i, options.seed ?? 1);
    const body = { surface: request.surface, viewer: request.viewer, query: request.query ?? '', candidates: candidateSet(request.surface, request.query ?? '', request.viewer, SURFACES[request.surface]!), k: request.k ?? 10 };
    return {
      id: randomUUID(),
      tier: options.tier ?? 'ranking',
      timeMs: (options.timeMs ?? Date.now()) - (count - i),
      method: 'POST',
      path: '/rank',
      headers: { 'content-type': 'application/json', host: 'ranking.prod', authorization: '[redacted]' },
      body: Buffer.from(JSON.stringify(body)).toString('base64'),
      bodyTruncated: false,
      sampleRate: 1e-4,
      sampleMode: 'uniform',
    };
  });
}

/** Simple GET records with ids, for replay mechanics tests. */
export function simpleCorpus(count: number, tier = 'svc'): CorpusRecord[] {
  const now = Date.now();
  return Array.from({ length: count }, (_, i) => ({
    id: `rec-${i}`,
    tier,
    timeMs: now - (count - i),
    method: 'GET',
    path: `/item/${i}`,
    headers: { accept: 'application/json', connection: 'keep-alive' },
    body: '',
    bodyTruncated: false,
    sampleRate: 1,
    sampleMode: 'uniform',
  }));
}

export async function* stream<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}
