/** What a terminal and a CI log show (issue 32, json-server upgrade): words, not Markdown escapes; readable p-values and reasons. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { escapeMarkdownCell, formatP, joinSentences, markdownForTerminal } from '../../harness/index.js';
import { fieldName } from '../../harness/reports/compared-text.js';
import { runCli } from '../support/cli.js';

describe('text for a terminal', () => {
  it('undoes the Markdown escapes and entities, and keeps control characters escaped', () => {
    const name = 'error_share <b> [x] a|b *y* `z` \\ \u001b[2J';
    const md = escapeMarkdownCell(name);
    expect(md).toContain('error\\_share');
    expect(markdownForTerminal(md)).toBe('error_share <b> [x] a|b *y* `z` \\ \\u001b[2J');
  });

  it('says p-values a reader can take, joins reasons without doubled marks, names the whole body', () => {
    expect(formatP(0)).toBe('< 0.001');
    expect(formatP(0.00049)).toBe('< 0.001');
    expect(formatP(0.0123)).toBe('= 0.012');
    expect(formatP(Number.NaN)).toBe('= n/a');
    expect(joinSentences(['beyond the threshold.', 'final check x failed: 3 of 4;', ' '])).toBe('beyond the threshold; final check x failed: 3 of 4');
    expect(fieldName('')).toBe('(whole body)');
    expect(fieldName('items[].id')).toBe('items[].id');
  });

  it('`status` without a config is exit 3 naming the files it looked for, like every other command', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tandem-status-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const result = await runCli(['status'], { cwd: dir });
    expect(result.code).toBe(3);
    expect(result.err).toMatch(/no config file found: looked for tandem\.config\.yaml/);
    await writeFile(join(dir, 'tandem.config.yaml'), 'workloads: []\n');
    expect((await runCli(['status'], { cwd: dir })).code).toBe(0);
  });
});

describe('submit --wait progress', () => {
  it('says how many ended and where each unfinished one is, for a log that is not a terminal', async () => {
    const { waitingLine } = await import('../../cli/commands/submit.js');
    const base = { createdAtMs: 0, updatedAtMs: 0, seed: 1, spec: {} };
    const line = waitingLine([
      { ...base, id: 'e1', workload: 'ranking', status: 'passed', trials: [] },
      {
        ...base,
        id: 'e2',
        workload: 'search',
        status: 'running',
        trials: [
          { index: 0, attempt: 1, status: 'completed', startedAtMs: 0 },
          { index: 1, attempt: 1, status: 'running', startedAtMs: 0 },
        ],
      },
      { ...base, id: 'e3', workload: 'ads', status: 'queued', trials: [] },
    ]);
    expect(line).toBe('waiting: 1 of 3 experiment(s) ended (ranking passed); search running (1 trial(s) done), ads queued');
  });
});

describe('shape changes in words', () => {
  it('names a changed top-level shape, and nothing when it is the same or unreadable', async () => {
    const { shapeChange } = await import('../../harness/reports/shape-text.js');
    expect(shapeChange('[{"id":1}]', '{"first":1,"prev":null,"next":2,"last":5,"pages":5,"items":50,"data":[]}')).toBe(
      'array → object {first, prev, next, last, pages, items, data}',
    );
    expect(shapeChange('{"a":1}', '{"a":2}')).toBeUndefined();
    expect(shapeChange('[1]', 'not json')).toBeUndefined();
    expect(shapeChange('{"a":1}', '{"b":1}')).toBe('object {a} → object {b}');
    // Example bodies are cut for display: read by their first character, keys from the differing paths.
    expect(shapeChange('[{"id":1,"body":"lon', '{"data":[{"id":"1","bo', ['[].id', '[].body', 'data[].id', 'data[].body', 'total'])).toBe(
      'array → object {data, total}',
    );
  });
});
