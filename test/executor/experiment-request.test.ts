import { describe, expect, it } from 'vitest';
import { parseRequest } from '../../executor/index.js';

describe('experiment requests', () => {
  it('take git revisions and build labels, and refuse a revision that could do anything in the deploy shell', () => {
    for (const revision of ['9f2c1e0', 'origin/main', 'v1.2.3', 'HEAD~1', 'latency=5,malformed-tensor=rank-video', 'feature/x+y@2']) {
      expect(parseRequest({ workload: 'w', treatmentRevision: revision }).treatmentRevision).toBe(revision);
    }
    for (const revision of ['main; rm -rf /', '$(id)', '`id`', 'a b', 'x|y', '-rf', "a'b", 'a"b', 'a>b', 'a&b']) {
      expect(() => parseRequest({ workload: 'w', controlRevision: revision }), revision).toThrow(/controlRevision.*must be a git revision or build label/s);
    }
  });
});
