import type { CorpusRecord } from '../../core/index.js';
export { rankingCorpus } from '../../examples/stack/index.js';

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
