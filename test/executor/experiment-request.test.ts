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

  it('refuse a change id with control, line-separator or bidi characters (issue 32), and waits no timer can hold', () => {
    expect(parseRequest({ workload: 'w', change: 'PR 17: fix — café ☕' }).change).toBe('PR 17: fix — café ☕');
    for (const change of ['a\u001b]0;t\u0007', 'a\nb', 'a\u2028b', 'evil\u202etxt.exe', 'a\u009bb']) {
      expect(() => parseRequest({ workload: 'w', change }), JSON.stringify(change)).toThrow(/change: must be printable/);
    }
    expect(() => parseRequest({ workload: 'w', overrides: { measureMs: 30 * 86_400_000 } })).toThrow(/overrides\.measureMs/);
  });
});
