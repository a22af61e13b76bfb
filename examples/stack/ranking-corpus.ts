/**
 * A corpus of the ranking tier as the recorder would store it: POST /rank
 * bodies of the stack's own production traffic. Tests, benchmarks and the
 * demo replay it without recording first.
 */
import { randomUUID } from 'node:crypto';
import type { CorpusRecord } from '../../core/model.js';
import { candidateSet } from './model.js';
import { productionRequest } from './traffic.js';
import { SURFACES } from './query-service.js';

/** Recorded requests of the example stack's ranking tier (POST /rank), as the recorder would store them. */
export function rankingCorpus(count: number, options: { tier?: string; timeMs?: number; seed?: number } = {}): CorpusRecord[] {
  return Array.from({ length: count }, (_, i) => {
    const request = productionRequest(i, options.seed ?? 1);
    const body = {
      surface: request.surface,
      viewer: request.viewer,
      query: request.query ?? '',
      candidates: candidateSet(request.surface, request.query ?? '', request.viewer, SURFACES[request.surface]!),
      k: request.k ?? 10,
    };
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
