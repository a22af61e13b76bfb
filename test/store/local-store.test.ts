import { mkdir, mkdtemp, readFile, rm, stat, writeFile, appendFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLocalStore } from '../../store/index.js';
import { corpusRecord, storeContract, T0 } from './store-contract.js';
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
    const outcome = { experimentId: 'exp-2', trial: 0, attempt: 1, arm: 'control', recordId: 'r', intendedMs: 1, latencyMs: 1, status: 200, bytes: 1, errorClass: '', bodyHash: 'h', first: true };
    const view = { method: 'GET', path: '/', decodedBytes: 1, contentHash: 'h' };
    await mkdir(join(dir, 'outcomes', 'exp-2'), { recursive: true });
    const lines = [{ ...outcome, response: { ...view, sketch: { a: ['h', 'first'] } } }, { ...outcome, recordId: 'bad', response: { ...view, sketch: { a: 'not a pair' } } }];
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
