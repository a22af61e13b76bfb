import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { createClickHouseStore, type ClickHouseStore } from '../../store/index.js';
import { corpusRecord, experimentRecord, storeContract, T0 } from './store-contract.js';
import { UNSUMMARIZED_KIND } from '../../store/clickhouse/clickhouse-schema.js';
import { killHard, spawnTs, waitForLine } from '../support/child.js';
import { freePort } from '../support/free-port.js';

const url = inject('clickhouseUrl');

function database(): string {
  return `tandem_test_${randomUUID().replaceAll('-', '')}`;
}

async function freshStore(db = database()): Promise<ClickHouseStore> {
  const store = createClickHouseStore({ url, database: db });
  await store.init();
  return store;
}

storeContract('clickhouse', () => freshStore());

describe('clickhouse store', () => {
  it('creates its tables idempotently', async () => {
    const db = database();
    const store = await freshStore(db);
    onTestFinished(() => store.close());
    await store.corpus.append([corpusRecord()]);
    await store.init();
    expect((await store.corpus.tiers())[0]?.count).toBe(1);
  });

  it('lists a corpus an older Tandem recorded from the summary it builds once at init, and keeps it as records arrive', async () => {
    const db = database();
    const store = await freshStore(db);
    onTestFinished(() => store.close());
    await store.corpus.append([corpusRecord(), corpusRecord({ timeMs: T0 + 3_600_000 })]);
    // As an older Tandem left it: records, and neither the summary view nor its rows.
    const command = async (sqlText: string): Promise<void> => {
      const res = await fetch(url, { method: 'POST', body: sqlText });
      expect(res.status, await res.text()).toBe(200);
    };
    await command(`DROP TABLE ${db}.corpus_tiers_mv`);
    await command(`TRUNCATE TABLE ${db}.corpus_tiers`);
    expect(await store.corpus.tiers()).toEqual([]);
    await store.init();
    await store.init();
    expect((await store.corpus.tiers()).map((t) => [t.tier, t.count, t.firstMs, t.lastMs])).toEqual([['ranking', 2, T0, T0 + 3_600_000]]);
    await store.corpus.append([corpusRecord({ timeMs: T0 + 60_000 })]);
    expect((await store.corpus.tiers())[0]?.count).toBe(3);
  });

  it('adds columns a table made by an older Tandem lacks (outcomes.response), keeping its rows', async () => {
    const db = database();
    const query = async (sqlText: string): Promise<void> => {
      const res = await fetch(url, { method: 'POST', body: sqlText });
      expect(res.status, await res.text()).toBe(200);
    };
    await query(`CREATE DATABASE ${db}`);
    // The outcomes table as the previous release created it.
    await query(
      `CREATE TABLE ${db}.outcomes (experiment_id String, trial UInt32, attempt UInt32, arm String, record_id String, time DateTime, intended_ms Float64, latency_ms Float64, status UInt16, bytes UInt64, error_class String, body_hash String, first UInt8, body String) ENGINE = MergeTree() PARTITION BY toYYYYMM(time) ORDER BY (experiment_id, trial, intended_ms, arm)`,
    );
    await query(`INSERT INTO ${db}.outcomes VALUES ('exp-old', 0, 1, 'control', 'r0', 1796032800, 1796032800000, 1.5, 200, 10, '', 'ab', 1, '')`);
    const store = await freshStore(db);
    onTestFinished(() => store.close());
    const response = { method: 'GET', path: '/x', decodedBytes: 2, contentHash: 'cd' };
    await store.outcomes.append([
      {
        experimentId: 'exp-new',
        trial: 0,
        attempt: 1,
        arm: 'control',
        recordId: 'r1',
        intendedMs: 1_796_032_800_000,
        latencyMs: 1,
        status: 200,
        bytes: 2,
        errorClass: '',
        bodyHash: 'ab',
        first: true,
        response,
      },
    ]);
    const read = async (id: string) => {
      const out = [];
      for await (const o of store.outcomes.read(id)) out.push(o);
      return out;
    };
    expect((await read('exp-old')).map((o) => [o.recordId, o.response])).toEqual([['r0', undefined]]);
    expect((await read('exp-new'))[0]!.response).toEqual(response);
  });

  it("fills the summary columns of experiments an older Tandem wrote, so the listing's filters find them", async () => {
    const db = database();
    const query = async (sqlText: string): Promise<string> => {
      const res = await fetch(url, { method: 'POST', body: sqlText });
      const text = await res.text();
      expect(res.status, text).toBe(200);
      return text.trim();
    };
    await query(`CREATE DATABASE ${db}`);
    // The experiments table as the previous release created it, with two versions of one record and a row that is not JSON.
    await query(
      `CREATE TABLE ${db}.experiments (id String, workload String, status String, created_ms UInt64, updated_ms UInt64, record String) ENGINE = ReplacingMergeTree(updated_ms) ORDER BY id`,
    );
    const running = experimentRecord({ status: 'running', spec: { stage: 'diff', request: { change: 'D42' } } });
    const finished = { ...running, status: 'passed' as const, updatedAtMs: running.updatedAtMs + 5_000, verdict: { outcome: 'passed' } };
    const calibration = experimentRecord({ status: 'passed', spec: { kind: 'calibration', stage: 'periodic' } });
    const row = (r: typeof running) => `('${r.id}', '${r.workload}', '${r.status}', ${r.createdAtMs}, ${r.updatedAtMs}, '${JSON.stringify(r)}')`;
    await query(`INSERT INTO ${db}.experiments VALUES ${row(running)}, ${row(calibration)}, ('exp-garbled', 'ranking', 'passed', ${T0}, ${T0}, 'not json')`);
    await query(`INSERT INTO ${db}.experiments VALUES ${row(finished)}`);

    const store = await freshStore(db);
    onTestFinished(() => store.close());
    const ids = async (q: Parameters<typeof store.experiments.list>[0]) => (await store.experiments.list(q)).map((r) => r.id);
    expect(await ids({ change: 'D42' })).toEqual([running.id]);
    expect(await ids({ stage: 'diff', outcome: 'passed' })).toEqual([running.id]);
    expect(await ids({ kind: 'calibration' })).toEqual([calibration.id]);
    expect(await store.experiments.count({ stage: 'periodic' })).toBe(1);
    // The latest version, unchanged; the garbled row still counted in the unfiltered listing.
    expect(await store.experiments.get(running.id)).toEqual(finished);
    expect(await store.experiments.count()).toBe(3);
    // Nothing is left to fill: the next init finds no row with the older default.
    expect(await query(`SELECT count() FROM ${db}.experiments WHERE kind = '${UNSUMMARIZED_KIND}'`)).toBe('0');
    await store.init();
    expect(await query(`SELECT count() FROM ${db}.experiments`)).toBe('3');
  });

  it('names the URL when the server cannot be reached', async () => {
    const down = `http://127.0.0.1:${await freePort()}`;
    const store = createClickHouseStore({ url: down, database: 'tandem', requestTimeoutMs: 2_000 });
    onTestFinished(() => store.close());
    await expect(store.init()).rejects.toMatchObject({
      code: 'TANDEM_ERR_STORE',
      message: expect.stringContaining(`cannot reach ClickHouse at ${down}`),
    });
  });

  it("names the URL and quotes the server's message when a query is refused", async () => {
    const store = createClickHouseStore({ url, database: database() }); // never initialized: tables are missing
    onTestFinished(() => store.close());
    const refusal = store.experiments.list();
    await expect(refusal).rejects.toMatchObject({ code: 'TANDEM_ERR_STORE' });
    await expect(refusal).rejects.toThrow(new RegExp(`ClickHouse at ${url} refused .*(Database|Table) .*doesn't exist`));
  });

  it('reports a server that answers garbage as a store error', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('Code: 999, e.displayText() = DB::Exception: synthetic failure');
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const fake = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const store = createClickHouseStore({ url: fake, database: 'tandem' });
    onTestFinished(() => store.close());
    await expect(store.init()).rejects.toThrow(`ClickHouse at ${fake} refused`);
  });

  it('stays readable after a writer is killed mid-insert', async () => {
    const db = database();
    const store = await freshStore(db);
    onTestFinished(() => store.close());
    const child = spawnTs(join(import.meta.dirname, 'fixtures', 'append-forever.ts'), ['clickhouse', url, db]);
    await waitForLine(child, 'ready');
    const deadline = Date.now() + 20_000;
    let seen = 0;
    while (seen < 500 && Date.now() < deadline) seen = (await store.corpus.tiers())[0]?.count ?? 0;
    await killHard(child);
    let count = 0;
    for await (const r of store.corpus.read('crash', { sinceMs: 0 })) {
      expect(r.path).toMatch(/^\/batch\/\d+\/\d+$/);
      count++;
    }
    expect(count).toBeGreaterThanOrEqual(seen);
    // Inserts are atomic per request: only whole batches are visible.
    expect(count % 50).toBe(0);
  });
});
