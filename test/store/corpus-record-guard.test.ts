/** A corpus line read back is a record only with a sampling mode Tandem writes (issue 71 added `mirror`). */
import { describe, expect, it } from 'vitest';
import { isCorpusRecord } from '../../store/record-guards.js';

const record = {
  id: 'r1',
  tier: 'web',
  timeMs: 1,
  method: 'GET',
  path: '/',
  headers: {},
  body: '',
  bodyTruncated: false,
  sampleRate: 0.0001,
  sampleMode: 'mirror',
};

describe('a corpus record read back', () => {
  it('takes every mode Tandem writes and nothing else', () => {
    for (const sampleMode of ['uniform', 'sticky', 'import', 'mirror']) expect(isCorpusRecord({ ...record, sampleMode })).toBe(true);
    for (const sampleMode of ['', 'Mirror', 'edge', '__proto__']) expect(isCorpusRecord({ ...record, sampleMode })).toBe(false);
  });
});
