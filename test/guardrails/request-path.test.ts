import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../core/index.js';
import { normalizedBySegments, normalizedPath } from '../../guardrails/request-path.js';

describe('a request path normalized for matching writePaths', () => {
  it('takes the plain-path shortcut only where the general case gives the same path (20,000 seeded paths)', () => {
    const random = seededRandom(7);
    const pieces = ['a', 'B', 'pkg.Svc', 'Method', '.', '..', '', '%2e', '%2F', '%41', ';x', '\\', '-', '~', ':', '@', 'é', '%00'];
    for (let i = 0; i < 20_000; i++) {
      const segments = Array.from({ length: 1 + Math.floor(random() * 5) }, () => pieces[Math.floor(random() * pieces.length)]!);
      const path = `/${segments.join('/')}${random() < 0.2 ? '/' : ''}`;
      expect(normalizedPath(path), path).toBe(normalizedBySegments(path));
      expect(normalizedPath(`${path}?q=/admin#f`), path).toBe(normalizedBySegments(path));
    }
    expect(normalizedPath('/tandem.test.Catalog/Lookup')).toBe('/tandem.test.catalog/lookup');
  });
});
