/**
 * `tandem demo` interrupted: everything it started stops. Nothing is judged before the interrupt, so this file runs
 * beside the others (the judged story runs alone: demo.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { demo, processesWith } from '../support/demo-process.js';
import { tempDir } from '../support/temp-dir.js';

describe('tandem demo', () => {
  it('stops everything it started on Ctrl-C', { timeout: 120_000 }, async () => {
    const dir = await tempDir('tandem-demo-int-');
    const marker = randomUUID();
    const result = await demo([], dir, marker, /\[1\/5\].*trial 1 running/);
    expect(result.code).not.toBe(0);
    expect(result.err).toMatch(/interrupted|cancel/i);
    expect(await processesWith(marker)).toEqual([]);
  });
});
