import { createHash } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { TRANSPORT_DEFAULTS } from '../../core/index.js';
import { BodyBudget, BodyCopy, configureTransport } from '../../net/index.js';

describe('a body copied as it passes', () => {
  it('keeps its bytes up to its limit, then only counts and hashes them', () => {
    const budget = new BodyBudget(1_000);
    const copy = new BodyCopy(10, { hash: true, budget });
    copy.add(Buffer.from('hello '));
    expect([copy.bytes().toString(), copy.truncated, budget.held]).toEqual(['hello ', false, 6]);
    copy.add(Buffer.from('world, and more'));
    expect([copy.bytes().length, copy.truncated, copy.size, budget.held]).toEqual([0, true, 21, 0]);
    expect(copy.digest()).toBe(createHash('sha1').update('hello world, and more').digest('hex'));
  });

  it('hashes every byte whatever the number of chunks: none, one, two, three', () => {
    const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');
    for (const chunks of [[], ['one'], ['one', 'two'], ['one', 'two', 'three']]) {
      const copy = new BodyCopy(0, { hash: true });
      for (const chunk of chunks) copy.add(Buffer.from(chunk));
      expect(copy.digest(), chunks.join('|')).toBe(sha1(chunks.join('')));
    }
    expect(new BodyCopy(10).digest()).toBe('');
  });

  it('draws on one budget with every other copy, and gives it back when released', () => {
    const budget = new BodyBudget(100);
    const first = new BodyCopy(80, { budget });
    first.add(Buffer.alloc(70));
    // Within its own limit, over what the budget has left: truncated.
    const second = new BodyCopy(80, { budget });
    second.add(Buffer.alloc(40));
    expect([second.truncated, budget.held]).toEqual([true, 70]);
    first.release();
    first.release();
    expect(budget.held).toBe(0);
    const third = new BodyCopy(80, { budget });
    third.add(Buffer.alloc(40));
    expect([third.truncated, third.bytes().length, budget.held]).toEqual([false, 40, 40]);
  });

  it("draws on the process's budget as configured (transport.bodyBudgetBytes)", () => {
    onTestFinished(() => configureTransport(TRANSPORT_DEFAULTS));
    const body = Buffer.alloc(2 * 1_048_576);
    configureTransport({ ...TRANSPORT_DEFAULTS, bodyBudgetBytes: 1_048_576 });
    const small = new BodyCopy(4 * 1_048_576);
    small.add(body);
    expect([small.truncated, small.size]).toEqual([true, body.length]);
    configureTransport(TRANSPORT_DEFAULTS);
    const large = new BodyCopy(4 * 1_048_576);
    large.add(body);
    expect([large.truncated, large.bytes().length]).toEqual([false, body.length]);
    large.release();
  });
});
