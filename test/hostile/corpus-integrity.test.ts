/**
 * Nothing lost, nothing doubled, nothing shown raw (issue 18): the local
 * corpus store and `tandem corpus` against races, full disks, hostile files.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { lstat, mkdir, readFile, stat, symlink, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CorpusRecord } from '../../core/index.js';
import { createLocalStore } from '../../store/index.js';
import { formatGor } from '../../recorder/index.js';
import { tempDir } from '../support/temp-dir.js';
import { runCli } from '../support/cli.js';

const T0 = Date.UTC(2026, 10, 30, 10); // an hour boundary
const record = (i: number, timeMs: number, extra: Partial<CorpusRecord> = {}): CorpusRecord => ({
  id: `r${i}`,
  tier: 'query',
  timeMs,
  method: 'GET',
  path: `/r/${i}`,
  headers: {},
  body: '',
  bodyTruncated: false,
  sampleRate: 1,
  sampleMode: 'uniform',
  ...extra,
});

describe('prune racing a recording in another process', () => {
  it('never deletes a record after its cutoff, whatever the recorder appends meanwhile', async () => {
    const dir = await tempDir();
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    await store.init();
    // Ten records before the cutoff, in the same hour as the ones the "recorder" appends after it.
    await store.corpus.append(Array.from({ length: 10 }, (_, i) => record(i, T0 + i * 1_000)));
    const file = join(dir, '.tandem', 'corpus', 'query', '2026113010.ndjson');
    const cutoff = T0 + 30 * 60_000;
    // The recorder's records after the cutoff, interleaved with late ones before it (so every prune has work to do).
    const after = Array.from({ length: 400 }, (_, i) => record(1_000 + i, cutoff + 1 + i));
    const lines = after.flatMap((r, i) => [JSON.stringify(r), JSON.stringify(record(5_000 + i, cutoff - 1 - i))]);
    // Another process appending one line per write, as a recorder's writer does with O_APPEND, paced at about
    // one line per millisecond so its appends spread over many prunes.
    const pace = 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0,1)';
    const source = join(dir, 'to-append.ndjson');
    await writeFile(source, lines.join('\n'));
    const script = `const fs=require('fs');for(const l of fs.readFileSync(${JSON.stringify(source)},'utf8').split('\\n')){fs.appendFileSync(${JSON.stringify(file)},l+'\\n');${pace}}`;
    const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    const exited = once(child, 'exit');
    let running = true;
    void exited.then(() => (running = false));
    let deleted = 0;
    let prunes = 0;
    while (running || prunes === 0) {
      deleted += await store.corpus.prune(cutoff, 'query');
      prunes++;
    }
    await exited;
    deleted += await store.corpus.prune(cutoff, 'query');
    const left: CorpusRecord[] = [];
    for await (const r of store.corpus.read('query', { sinceMs: 0 })) left.push(r);
    expect(left.map((r) => r.id).sort()).toEqual(after.map((r) => r.id).sort());
    expect(deleted).toBeGreaterThanOrEqual(10);
    expect((await store.corpus.tiers())[0]).toMatchObject({ count: 400 });
  });
});

describe('tandem corpus with hostile files', () => {
  it('rejects imported records with extreme dates, CRLF header names and huge methods, naming the entry', async () => {
    const dir = await tempDir();
    const at = (startedDateTime: string, request: Record<string, unknown> = {}): unknown => ({
      startedDateTime,
      request: { method: 'GET', url: 'http://svc/a', headers: [], ...request },
    });
    const har = {
      log: {
        entries: [
          at('+275760-09-13T00:00:00.000Z'),
          at('0999-01-01T00:00:00.000Z'),
          at(new Date().toISOString(), { headers: [{ name: 'x-a\r\nx-b', value: '1' }] }),
          at(new Date().toISOString(), { method: 'G'.repeat(100_000) }),
          at(new Date().toISOString()),
        ],
      },
    };
    await writeFile(join(dir, 'c.har'), JSON.stringify(har));
    const result = await runCli(['corpus', 'import', 'c.har', '--tier', 'query', '--json'], { cwd: dir });
    expect(result.code).toBe(0);
    const out = JSON.parse(result.out) as { imported: number; skipped: { where: string; reason: string }[] };
    expect(out.imported).toBe(1);
    expect(out.skipped.map((s) => s.where)).toEqual(['entry 0', 'entry 1', 'entry 2', 'entry 3']);
    expect(out.skipped[0]!.reason).toMatch(/outside 1970–9999/);
    expect(out.skipped[2]!.reason).toMatch(/header name .* is not a token/);
    // A .gor timestamp of 1e29 ns.
    const gor = Buffer.from(
      formatGor([record(1, Date.now())])
        .toString('latin1')
        .replace(/^1 (\S+) \d+/, '1 $1 100000000000000000000000000000'),
      'latin1',
    );
    await writeFile(join(dir, 'c.gor'), gor);
    const fromGor = JSON.parse((await runCli(['corpus', 'import', 'c.gor', '--tier', 'query', '--json'], { cwd: dir })).out) as {
      imported: number;
      skipped: { reason: string }[];
    };
    expect(fromGor).toMatchObject({ imported: 0, skipped: [{ reason: expect.stringMatching(/outside 1970–9999/) }] });
    const ls = JSON.parse((await runCli(['corpus', 'ls', '--json'], { cwd: dir })).out) as { tiers: { count: number }[] };
    expect(ls.tiers[0]!.count).toBe(1);
  });

  it('importing the same file twice writes its records once; --rebase of 150,000 entries does not overflow', async () => {
    const dir = await tempDir();
    const now = Date.now();
    await writeFile(join(dir, 'big.gor'), formatGor(Array.from({ length: 150_000 }, (_, i) => record(i, now - 150_000 + i))));
    const first = await runCli(['corpus', 'import', 'big.gor', '--tier', 'query', '--rebase', '--json'], { cwd: dir });
    expect(first.err).toBe('');
    expect(JSON.parse(first.out)).toMatchObject({ imported: 150_000, alreadyPresent: 0 });
    const again = JSON.parse((await runCli(['corpus', 'import', 'big.gor', '--tier', 'query', '--rebase', '--json'], { cwd: dir })).out) as unknown;
    expect(again).toMatchObject({ imported: 0, alreadyPresent: 150_000 });
  }, 120_000);

  it('export --out replaces an existing 0644 file or symlink with a private file, never writing through the link', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'r.gor'), formatGor([record(1, Date.now())]));
    await runCli(['corpus', 'import', 'r.gor', '--tier', 'query'], { cwd: dir });
    await writeFile(join(dir, 'open.ndjson'), 'old');
    await chmod(join(dir, 'open.ndjson'), 0o644);
    expect((await runCli(['corpus', 'export', 'query', '--out', 'open.ndjson'], { cwd: dir })).code).toBe(0);
    expect((await stat(join(dir, 'open.ndjson'))).mode & 0o777).toBe(0o600);
    await mkdir(join(dir, 'elsewhere'));
    await writeFile(join(dir, 'elsewhere', 'target'), 'untouched');
    await symlink(join(dir, 'elsewhere', 'target'), join(dir, 'link.ndjson'));
    expect((await runCli(['corpus', 'export', 'query', '--out', 'link.ndjson'], { cwd: dir })).code).toBe(0);
    expect(await readFile(join(dir, 'elsewhere', 'target'), 'utf8')).toBe('untouched');
    expect((await lstat(join(dir, 'link.ndjson'))).isSymbolicLink()).toBe(false);
    expect((await stat(join(dir, 'link.ndjson'))).mode & 0o777).toBe(0o600);
  });

  it('corpus show escapes control characters from recorded requests', async () => {
    const dir = await tempDir();
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    await store.init();
    await store.corpus.append([
      record(1, Date.now(), {
        path: '/x\u001b[2J\u001b]0;owned\u0007',
        headers: { 'x-a': 'v\u001b[31m' },
        body: Buffer.from('b\u001bc\u009b').toString('base64'),
      }),
    ]);
    const show = await runCli(['corpus', 'show', 'query'], { cwd: dir });
    // eslint-disable-next-line no-control-regex -- asserting their absence
    expect(show.out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(show.out).toContain('/x\\u001b[2J\\u001b]0;owned\\u0007');
    expect(show.out).toContain('x-a: v\\u001b[31m');
  });
});
