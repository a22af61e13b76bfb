import { mkdir, mkdtemp, readFile, rm, stat, writeFile, appendFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLocalStore } from '../../store/index.js';
import { corpusRecord, experimentRecord, storeContract, T0 } from './store-contract.js';
import { killHard, spawnTs, waitForLine } from '../support/child.js';

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-store-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

storeContract('local', async () => {
  const store = createLocalStore({ dir: join(await tempDir(), '.tandem') });
  await store.init();
  return store;
});

describe('local store files', () => {
  it('writes NDJSON a person can read, private to the owner', async () => {
    const dir = join(await tempDir(), '.tandem');
    const store = createLocalStore({ dir });
    const record = corpusRecord();
    await store.corpus.append([record]);
    const file = join(dir, 'corpus', 'ranking', '2026113010.ndjson');
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(record);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'corpus'))).mode & 0o777).toBe(0o700);
  });

  it('lists from a summary index written only when a summary changes, and from the record files where the index is missing, torn or stale', async () => {
    const dir = join(await tempDir(), '.tandem');
    const writer = createLocalStore({ dir });
    const a = experimentRecord({ id: 'exp-a', createdAtMs: T0 });
    const b = experimentRecord({ id: 'exp-b', createdAtMs: T0 + 1 });
    await writer.experiments.put(a);
    for (let trial = 0; trial < 5; trial++)
      await writer.experiments.put({ ...a, updatedAtMs: T0 + trial + 1, trials: [{ index: trial, attempt: 1, status: 'running', startedAtMs: T0 }] });
    await writer.experiments.put(b);
    const index = join(dir, 'experiments', 'summaries.ndjson');
    expect((await readFile(index, 'utf8')).trim().split('\n')).toHaveLength(2);
    // A long-lived reader tails the index: a later change is seen without re-reading the whole file.
    const reader = createLocalStore({ dir });
    expect((await reader.experiments.list()).map((r) => r.id)).toEqual(['exp-b', 'exp-a']);
    await writer.experiments.put({ ...b, status: 'passed', updatedAtMs: T0 + 50 });
    expect((await reader.experiments.list({ status: 'passed' })).map((r) => r.id)).toEqual(['exp-b']);
    // A writer killed mid-line, then an index lost entirely (a store from an older Tandem): the record files are read.
    await appendFile(index, '{"id":"exp-b","workl');
    expect((await createLocalStore({ dir }).experiments.list({ status: 'passed' })).map((r) => r.id)).toEqual(['exp-b']);
    await rm(index);
    const fresh = createLocalStore({ dir });
    expect(await fresh.experiments.count()).toBe(2);
    expect((await fresh.experiments.list({ status: 'passed' })).map((r) => r.id)).toEqual(['exp-b']);
    expect((await readFile(index, 'utf8')).trim().split('\n')).toHaveLength(2);
    // The index says passed, the record file (the truth) says regressed after a lost summary line: the record is shown.
    await writeFile(join(dir, 'experiments', 'exp-b.json'), JSON.stringify({ ...b, status: 'regressed', updatedAtMs: T0 + 60 }));
    expect((await fresh.experiments.list({ status: 'passed' })).map((r) => r.status)).toEqual(['regressed']);
    // A removed record leaves the listing.
    await rm(join(dir, 'experiments', 'exp-a.json'));
    expect((await fresh.experiments.list()).map((r) => r.id)).toEqual(['exp-b']);
  });

  it('skips and reports a torn last line, and the next append starts on a fresh line', async () => {
    const dir = join(await tempDir(), '.tandem');
    const store = createLocalStore({ dir });
    const first = corpusRecord();
    await store.corpus.append([first]);
    const file = join(dir, 'corpus', 'ranking', '2026113010.ndjson');
    await appendFile(file, JSON.stringify(corpusRecord()).slice(0, 40)); // a write cut short by a kill
    const reopened = createLocalStore({ dir });
    const corrupt: string[] = [];
    const read = async (): Promise<string[]> => {
      const ids: string[] = [];
      for await (const r of reopened.corpus.read('ranking', { sinceMs: 0, onCorrupt: (where) => corrupt.push(where) })) ids.push(r.id);
      return ids;
    };
    expect(await read()).toEqual([first.id]);
    expect(corrupt).toEqual([`${file}:2`]);
    const later = corpusRecord({ timeMs: T0 + 1 });
    await reopened.corpus.append([later]);
    corrupt.length = 0;
    expect(await read()).toEqual([first.id, later.id]);
    expect(corrupt).toHaveLength(1);
  });

  it('reports lines that are JSON but not records instead of passing them on', async () => {
    const dir = join(await tempDir(), '.tandem');
    const store = createLocalStore({ dir });
    await store.init();
    await writeFile(join(dir, 'observations', 'exp-1.ndjson'), '{"hello":"world"}\n', { mode: 0o600 });
    const corrupt: string[] = [];
    expect(await store.observations.read('exp-1', { onCorrupt: (_where, reason) => corrupt.push(reason) })).toEqual([]);
    expect(corrupt).toEqual(['JSON does not have the fields of this record type']);
  });

  it('reports an outcome whose response view is malformed (a hand-edited sketch) instead of handing it to the comparison', async () => {
    const dir = join(await tempDir(), '.tandem');
    const store = createLocalStore({ dir });
    await store.init();
    const outcome = {
      experimentId: 'exp-2',
      trial: 0,
      attempt: 1,
      arm: 'control',
      recordId: 'r',
      intendedMs: 1,
      latencyMs: 1,
      status: 200,
      bytes: 1,
      errorClass: '',
      bodyHash: 'h',
      first: true,
    };
    const view = { method: 'GET', path: '/', decodedBytes: 1, contentHash: 'h' };
    await mkdir(join(dir, 'outcomes', 'exp-2'), { recursive: true });
    const lines = [
      { ...outcome, response: { ...view, sketch: { a: ['h', 'first'] } } },
      { ...outcome, recordId: 'bad', response: { ...view, sketch: { a: 'not a pair' } } },
    ];
    await writeFile(join(dir, 'outcomes', 'exp-2', '0.ndjson'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`, { mode: 0o600 });
    const corrupt: string[] = [];
    const read: string[] = [];
    for await (const o of store.outcomes.read('exp-2', { onCorrupt: (_where, reason) => corrupt.push(reason) })) read.push(o.recordId);
    expect(read).toEqual(['r']);
    expect(corrupt).toEqual(['JSON does not have the fields of this record type']);
  });

  it('fails with a StoreError naming the directory when it cannot write, and writes nothing', async () => {
    const parent = await tempDir();
    await writeFile(join(parent, 'not-a-dir'), 'x');
    const store = createLocalStore({ dir: join(parent, 'not-a-dir', '.tandem') });
    await expect(store.init()).rejects.toMatchObject({ code: 'TANDEM_ERR_STORE', message: expect.stringContaining(join(parent, 'not-a-dir', '.tandem')) });
    await expect(store.corpus.append([corpusRecord()])).rejects.toMatchObject({ code: 'TANDEM_ERR_STORE' });
    expect(await readdir(parent)).toEqual(['not-a-dir']);
    expect(await readFile(join(parent, 'not-a-dir'), 'utf8')).toBe('x');
  });

  it('stays readable after a writer is killed mid-append', async () => {
    const dir = join(await tempDir(), '.tandem');
    const child = spawnTs(join(import.meta.dirname, 'fixtures', 'append-forever.ts'), ['local', dir]);
    await waitForLine(child, 'ready');
    // Let it write more batches; then kill it wherever it is.
    const store = createLocalStore({ dir });
    const deadline = Date.now() + 20_000;
    let seen = 0;
    while (seen < 500 && Date.now() < deadline) {
      seen = (await store.corpus.tiers())[0]?.count ?? 0;
    }
    await killHard(child);
    const ids = new Set<string>();
    for await (const r of store.corpus.read('crash', { sinceMs: 0 })) {
      expect(r.path).toMatch(/^\/batch\/\d+\/\d+$/);
      ids.add(r.id);
    }
    expect(ids.size).toBeGreaterThanOrEqual(seen);
    const after = corpusRecord({ tier: 'crash', timeMs: Date.UTC(2026, 10, 30, 0, 59) });
    await store.corpus.append([after]);
    const again: string[] = [];
    for await (const r of store.corpus.read('crash', { sinceMs: after.timeMs })) again.push(r.id);
    expect(again).toEqual([after.id]);
  });
});

describe('a local store on a read-only file system', () => {
  // A read-only mount needs root (the suite runs as root in CI); elsewhere there is nothing to mount, and the case is skipped.
  const isRoot = process.getuid?.() === 0;
  it.runIf(isRoot)('names EROFS and says what to do, not "ENOENT … mkdir" (issue 32)', async () => {
    const { execFileSync } = await import('node:child_process');
    const mountPoint = await tempDir();
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', mountPoint]);
    } catch {
      return; // a container without mount rights: nothing to test here
    }
    onTestFinished(() => void execFileSync('umount', [mountPoint]));
    const store = createLocalStore({ dir: join(mountPoint, 'nested', '.tandem') });
    const error = (await store.init().then(
      () => undefined,
      (e: unknown) => e,
    )) as Error & { hint?: string };
    expect(error.message).toContain('EROFS');
    expect(error.message).not.toContain('ENOENT');
    expect(error.hint).toContain('read-only file system');
  });
});
