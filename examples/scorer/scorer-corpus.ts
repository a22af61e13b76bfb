/** Recorded requests of the scorer: users and candidate sets of varied size, as a production sample would be. */
import { randomUUID } from 'node:crypto';
import { seededRandom, type CorpusRecord } from '../../core/index.js';

const TAGS = ['news', 'sport', 'music', 'film', 'travel', 'food', 'tech', 'games', 'books', 'art', 'science', 'health'];

export function scorerCorpus(count: number, options: { readonly seed?: number; readonly timeMs?: number } = {}): CorpusRecord[] {
  const random = seededRandom(options.seed ?? 7);
  return Array.from({ length: count }, (_, i) => {
    const items = Array.from({ length: 20 + Math.floor(random() * 60) }, (_, j) => ({
      id: `i${i}-${j}`,
      tags: Array.from({ length: 1 + Math.floor(random() * 4) }, () => TAGS[Math.floor(random() * TAGS.length)]!),
    }));
    const body = { user: `u${Math.floor(random() * 5_000)}`, items, k: 10 };
    return {
      id: randomUUID(),
      tier: 'scorer',
      timeMs: (options.timeMs ?? Date.now()) - (count - i),
      method: 'POST',
      path: '/score',
      headers: { 'content-type': 'application/json', host: 'scorer.prod' },
      body: Buffer.from(JSON.stringify(body)).toString('base64'),
      bodyTruncated: false,
      sampleRate: 1e-4,
      sampleMode: 'uniform',
    };
  });
}
