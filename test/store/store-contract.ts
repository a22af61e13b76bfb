/**
 * One contract for every storage backend: the same tests run unchanged
 * against the local files and ClickHouse (undici's cacheStoreTests pattern).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { seededRandom, type CorpusRecord, type DependencyErrorRecord, type ExperimentRecord, type RequestOutcome, type Sample } from '../../core/index.js';
import type { OutcomeAggregate, Store } from '../../store/index.js';
import { OutcomeAggregator } from '../../store/outcome-aggregates.js';

export const T0 = Date.UTC(2026, 10, 30, 10, 0, 0);
const HOUR = 3_600_000;

export function corpusRecord(overrides: Partial<CorpusRecord> = {}): CorpusRecord {
  return {
    id: randomUUID(),
    tier: 'ranking',
    timeMs: T0,
    method: 'POST',
    path: '/rank?surface=home&q=caf%C3%A9',
    headers: { 'content-type': 'application/json', authorization: '[redacted]' },
    body: Buffer.from(JSON.stringify({ viewer: 7, query: 'café ☕' })).toString('base64'),
    bodyTruncated: false,
    sampleRate: 1e-4,
    sampleMode: 'uniform',
    ...overrides,
  };
}

export function experimentRecord(overrides: Partial<ExperimentRecord> = {}): ExperimentRecord {
  return {
    id: `exp-${randomUUID()}`,
    workload: 'ranking',
    status: 'queued',
    createdAtMs: T0,
    updatedAtMs: T0,
    seed: 42,
    spec: { stage: 'diff', head: 'abc123' },
    trials: [],
    ...overrides,
  };
}

export function errorRecord(overrides: Partial<DependencyErrorRecord> = {}): DependencyErrorRecord {
  return {
    timeMs: T0,
    dependency: 'prediction',
    shard: 'shard-0',
    kind: 'contract-violation',
    message: 'tensor shape [64] is not [batch, features]',
    experimentId: '',
    arm: '',
    trial: '',
    job: '',
    jobs: [],
    ...overrides,
  };
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** A fresh, initialized, empty store per call; the suite closes it. */
export type StoreFactory = () => Promise<Store>;

export function storeContract(backend: string, makeStore: StoreFactory): void {
  async function withStore(test: (store: Store) => Promise<void>): Promise<void> {
    const store = await makeStore();
    try {
      await test(store);
    } finally {
      await store.close();
    }
  }

  describe(`store contract: ${backend}`, () => {
    it('reads a long lookback window whole and in time order, however its records are spread, and honours a limit across it', () =>
      withStore(async (store) => {
        // Sparse days ago, a dense minute, records on exact minute boundaries, and one a day and more in the future.
        const spread = [
          ...[5, 3, 2].map((days) => corpusRecord({ timeMs: T0 - days * 24 * HOUR })),
          ...Array.from({ length: 300 }, (_, i) => corpusRecord({ timeMs: T0 + i * 100 })),
          ...[1, 2, 3].map((minutes) => corpusRecord({ timeMs: T0 + minutes * 60_000 })),
          corpusRecord({ timeMs: Date.now() + 2 * 24 * HOUR }),
        ];
        await store.corpus.append(spread);
        const hourOf = (r: CorpusRecord): number => Math.floor(r.timeMs / HOUR);
        const read = await collect(store.corpus.read('ranking', { sinceMs: 0 }));
        expect(read.map((r) => r.id).sort()).toEqual(spread.map((r) => r.id).sort());
        expect(read.map(hourOf)).toEqual([...read.map(hourOf)].sort((a, b) => a - b));
        const windowed = await collect(store.corpus.read('ranking', { sinceMs: T0 - 3 * 24 * HOUR, untilMs: T0 + 60_000 }));
        expect(windowed.map((r) => r.id).sort()).toEqual(
          spread
            .filter((r) => r.timeMs >= T0 - 3 * 24 * HOUR && r.timeMs < T0 + 60_000)
            .map((r) => r.id)
            .sort(),
        );
        const limited = await collect(store.corpus.read('ranking', { sinceMs: 0, limit: 250 }));
        expect(limited).toEqual(read.slice(0, 250));
      }));

    it('round-trips corpus records exactly, oldest hour first, in a stable order, per tier', () =>
      withStore(async (store) => {
        const records = [0, 1, 2].map((i) => corpusRecord({ timeMs: T0 + i * 1000 }));
        const older = corpusRecord({ timeMs: T0 - HOUR });
        const other = corpusRecord({ tier: 'query', timeMs: T0 });
        await store.corpus.append([records[2]!, other]);
        await store.corpus.append([records[0]!, records[1]!, older]);
        const read = await collect(store.corpus.read('ranking', { sinceMs: 0 }));
        expect(read[0]).toEqual(older);
        expect(read.slice(1).sort((a, b) => a.timeMs - b.timeMs)).toEqual(records);
        expect(await collect(store.corpus.read('ranking', { sinceMs: 0 }))).toEqual(read);
        expect(await collect(store.corpus.read('query', { sinceMs: 0 }))).toEqual([other]);
        expect(await collect(store.corpus.read('nothing-here', { sinceMs: 0 }))).toEqual([]);
      }));

    it('keeps a withheld body marked withheld, and refuses record times outside 1970–9999', () =>
      withStore(async (store) => {
        const withheld = corpusRecord({ timeMs: T0, body: '', bodyTruncated: true, bodyWithheld: true });
        const truncated = corpusRecord({ timeMs: T0 + 1, body: '', bodyTruncated: true });
        await store.corpus.append([withheld, truncated]);
        expect(await collect(store.corpus.read('ranking', { sinceMs: 0 }))).toEqual([withheld, truncated]);
        for (const timeMs of [-1, Number.NaN, 8.64e15])
          await expect(store.corpus.append([corpusRecord({ timeMs })])).rejects.toThrow(/is not a time between 1970 and 9999/);
      }));

    it('round-trips a gRPC call exactly: binary messages, -bin metadata, status and trailers', () =>
      withStore(async (store) => {
        const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
        const call = corpusRecord({
          timeMs: T0,
          path: '/inference.GRPCInferenceService/ModelInfer',
          headers: { 'content-type': 'application/grpc', 'trace-bin': every.subarray(250).toString('base64'), authorization: '[redacted]' },
          body: Buffer.concat([Buffer.from([0, 0, 0, 1, 0]), every]).toString('base64'),
          grpc: {
            service: 'inference.GRPCInferenceService',
            method: 'ModelInfer',
            requestMessages: 1,
            responseMessages: [every.toString('base64'), ''],
            responseTruncated: false,
            status: 3,
            statusMessage: 'tensor "x": shape [64] ≠ [1, 64]',
            trailers: { 'grpc-status': '3', 'grpc-message': 'tensor%20%22x%22', 'x-shard-bin': every.subarray(0, 9).toString('base64') },
          },
        });
        const plain = corpusRecord({ timeMs: T0 + 1 });
        await store.corpus.append([call, plain]);
        expect(await collect(store.corpus.read('ranking', { sinceMs: 0 }))).toEqual([call, plain]);
        const id = `exp-${randomUUID()}`;
        const outcome: RequestOutcome = {
          experimentId: id,
          trial: 0,
          attempt: 1,
          arm: 'control',
          recordId: call.id,
          intendedMs: T0,
          latencyMs: 2,
          status: 200,
          bytes: 9,
          errorClass: 'grpc',
          bodyHash: 'ab'.repeat(20),
          first: true,
          grpcStatus: 3,
        };
        const reset: RequestOutcome = { ...outcome, arm: 'treatment', status: 200, errorClass: 'reset', grpcStatus: -1, first: false };
        await store.outcomes.append([outcome, reset]);
        expect(await collect(store.outcomes.read(id))).toEqual([outcome, reset]);
      }));

    it('reads only the lookback window and honours limit', () =>
      withStore(async (store) => {
        const records = [0, 1, 2, 3, 4, 5].map((h) => corpusRecord({ timeMs: T0 + h * HOUR + 123 }));
        await store.corpus.append(records);
        const window = await collect(store.corpus.read('ranking', { sinceMs: T0 + 2 * HOUR + 123, untilMs: T0 + 4 * HOUR + 123 }));
        expect(window.map((r) => r.id)).toEqual([records[2]!.id, records[3]!.id]);
        const limited = await collect(store.corpus.read('ranking', { sinceMs: 0, limit: 4 }));
        expect(limited.map((r) => r.id)).toEqual(records.slice(0, 4).map((r) => r.id));
      }));

    it('summarizes tiers and prunes exactly the records before the cutoff', () =>
      withStore(async (store) => {
        const records = [0, 1, 2, 3].map((i) => corpusRecord({ timeMs: T0 + i * 20 * 60_000 }));
        await store.corpus.append([...records, corpusRecord({ tier: 'query', timeMs: T0 })]);
        const tiers = await store.corpus.tiers();
        expect(tiers.map((t) => [t.tier, t.count, t.firstMs, t.lastMs])).toEqual([
          ['query', 1, T0, T0],
          ['ranking', 4, T0, T0 + 60 * 60_000],
        ]);
        expect(tiers.every((t) => t.bytes > 0)).toBe(true);
        // The cutoff falls inside an hour, so the boundary hour keeps its newer records.
        expect(await store.corpus.prune(T0 + 40 * 60_000, 'ranking')).toBe(2);
        expect((await collect(store.corpus.read('ranking', { sinceMs: 0 }))).map((r) => r.id)).toEqual([records[2]!.id, records[3]!.id]);
        expect(await collect(store.corpus.read('query', { sinceMs: 0 }))).toHaveLength(1);
        // The summary counts what is left, the hour the cutoff went through included.
        expect((await store.corpus.tiers()).map((t) => [t.tier, t.count, t.firstMs, t.lastMs])).toEqual([
          ['query', 1, T0, T0],
          ['ranking', 2, T0 + 40 * 60_000, T0 + 60 * 60_000],
        ]);
        expect(await store.corpus.prune(T0 + 2 * HOUR)).toBe(3);
        expect(await store.corpus.tiers()).toEqual([]);
      }));

    it('rejects tiers and experiment ids that are not names', () =>
      withStore(async (store) => {
        await expect(store.corpus.append([corpusRecord({ tier: '../../etc' })])).rejects.toMatchObject({ code: 'TANDEM_ERR_INPUT' });
        await expect(collect(store.corpus.read("x' OR 1=1", { sinceMs: 0 }))).rejects.toMatchObject({ code: 'TANDEM_ERR_INPUT' });
        await expect(store.experiments.get('../secret')).rejects.toMatchObject({ code: 'TANDEM_ERR_INPUT' });
      }));

    it('stores samples and reads them back by metric, arm and trial in time order', () =>
      withStore(async (store) => {
        const id = `exp-${randomUUID()}`;
        const samples: Sample[] = [];
        for (let i = 0; i < 20; i++) {
          samples.push({
            experimentId: id,
            trial: i % 2,
            arm: i % 4 < 2 ? 'control' : 'treatment',
            metric: i % 5 === 0 ? 'rss_bytes' : 'latency_ms',
            timeMs: T0 + (20 - i) * 10,
            value: i + 0.5,
          });
        }
        samples.push({ experimentId: id, trial: 0, arm: 'control', metric: 'up', timeMs: T0, value: 1, labels: { instance: 'a"b\\c' } });
        await store.samples.append(samples);
        await store.samples.append([{ experimentId: `exp-${randomUUID()}`, trial: 0, arm: 'control', metric: 'latency_ms', timeMs: T0, value: 9 }]);
        const latency = await collect(store.samples.read(id, { metric: 'latency_ms' }));
        expect(latency).toHaveLength(16);
        expect(latency.map((s) => s.timeMs)).toEqual([...latency.map((s) => s.timeMs)].sort((a, b) => a - b));
        const narrowed = await collect(store.samples.read(id, { metric: 'latency_ms', arm: 'treatment', trial: 1 }));
        expect(narrowed.map((s) => s.value).sort((a, b) => a - b)).toEqual(
          samples
            .filter((s) => s.metric === 'latency_ms' && s.arm === 'treatment' && s.trial === 1)
            .map((s) => s.value)
            .sort((a, b) => a - b),
        );
        expect(await collect(store.samples.read(id, { metric: 'up' }))).toEqual([samples[20]]);
      }));

    it('stores request outcomes and reads them back by trial and arm, ordered by trial then intended time', () =>
      withStore(async (store) => {
        const id = `exp-${randomUUID()}`;
        const outcome = (trial: number, arm: string, i: number, extra: Partial<RequestOutcome> = {}): RequestOutcome => ({
          experimentId: id,
          trial,
          attempt: 1,
          arm,
          recordId: `r${i}`,
          intendedMs: T0 + i * 0.5,
          latencyMs: 1.25 + i,
          status: 200,
          bytes: 120,
          errorClass: '',
          bodyHash: 'ab'.repeat(20),
          first: arm === 'control',
          ...extra,
        });
        const batch = [
          // One of an arm's several processes answered it (trials.processes).
          outcome(1, 'treatment', 3, { process: 2 }),
          outcome(0, 'control', 2, { status: 0, errorClass: 'timeout', bodyHash: '', bytes: 0 }),
          outcome(0, 'treatment', 1, {
            body: Buffer.from('{"items":[1,2]}').toString('base64'),
            response: { method: 'GET', path: '/items?x=1', contentType: 'application/json', encoding: 'gzip', decodedBytes: 15, contentHash: 'cd'.repeat(20) },
          }),
          // A large body: compared by its sketch, which round-trips too.
          outcome(1, 'control', 4, {
            response: {
              method: 'POST',
              path: '/big',
              requestBody: '{"q":"é"}',
              decodedBytes: 200_000,
              contentHash: 'ef'.repeat(20),
              sketch: { 'rows[].v': ['0123456789abcdef', '"same"'] },
            },
          }),
          outcome(1, 'control', 0),
        ];
        await store.outcomes.append(batch);
        await store.outcomes.append([{ ...outcome(0, 'control', 9), experimentId: `exp-${randomUUID()}` }]);
        const all: RequestOutcome[] = [];
        for await (const o of store.outcomes.read(id)) all.push(o);
        expect(all).toEqual([batch[2], batch[1], batch[4], batch[0], batch[3]]);
        const treatment: RequestOutcome[] = [];
        for await (const o of store.outcomes.read(id, { trial: 1, arm: 'treatment' })) treatment.push(o);
        expect(treatment).toEqual([batch[0]]);
      }));

    it('reads outcomes without their bodies and response views when asked for timing only', () =>
      withStore(async (store) => {
        const id = `exp-${randomUUID()}`;
        const full: RequestOutcome = {
          experimentId: id,
          trial: 0,
          attempt: 1,
          arm: 'control',
          recordId: 'r1',
          intendedMs: T0,
          latencyMs: 3.5,
          status: 200,
          bytes: 15,
          errorClass: '',
          bodyHash: 'ab'.repeat(20),
          first: true,
          process: 1,
          body: Buffer.from('{"a":1}').toString('base64'),
          response: { method: 'GET', path: '/a', decodedBytes: 7, contentHash: 'cd'.repeat(20) },
        };
        await store.outcomes.append([full]);
        const { body: _body, response: _response, ...timing } = full;
        expect(await collect(store.outcomes.read(id, { fields: 'timing' }))).toEqual([timing]);
        expect(await collect(store.outcomes.read(id))).toEqual([full]);
      }));

    it('aggregates outcomes per trial, attempt and arm where they are stored, equal to aggregating them one by one', () =>
      withStore(async (store) => {
        const id = `exp-${randomUUID()}`;
        const random = seededRandom(7);
        const outcomes: RequestOutcome[] = [];
        for (let i = 0; i < 3_000; i++) {
          const trial = i % 3;
          const arm = i % 2 === 0 ? 'control' : 'treatment';
          // Heavy-tailed latencies with exact zeros (no response timed), and a few error classes.
          const latencyMs = i % 97 === 0 ? 0 : Math.exp(random() * 6) * (1 + random());
          const errorClass = i % 41 === 0 ? 'timeout' : i % 53 === 0 ? 'status_5xx' : '';
          outcomes.push({
            experimentId: id,
            trial,
            attempt: trial === 1 && i % 5 === 0 ? 2 : 1,
            arm,
            recordId: `r${i}`,
            intendedMs: T0 + i,
            latencyMs,
            status: errorClass === 'timeout' ? 0 : 200,
            bytes: 100 + (i % 13),
            errorClass: errorClass as RequestOutcome['errorClass'],
            bodyHash: '',
            first: arm === 'control',
          });
        }
        await store.outcomes.append(outcomes);
        await store.outcomes.append([{ ...outcomes[0]!, experimentId: `exp-${randomUUID()}` }]);
        const expected = new OutcomeAggregator();
        for (const o of outcomes) expected.add(o);
        const close = (a: OutcomeAggregate[]) => a.map((g) => ({ ...g, latencySumMs: Math.round(g.latencySumMs * 1e6) / 1e6 }));
        // Sums may add in another order (floating point): equal to 1e-6 ms; counts, buckets, classes and extremes exactly.
        expect(close(await store.outcomes.aggregate(id))).toEqual(close(expected.aggregates()));
        expect(close(await store.outcomes.aggregate(id, { trial: 1 }))).toEqual(close(expected.aggregates().filter((g) => g.trial === 1)));
        expect(await store.outcomes.aggregate(`exp-${randomUUID()}`)).toEqual([]);
      }));

    it('upserts experiment records, last write wins, and lists newest first', () =>
      withStore(async (store) => {
        const a = experimentRecord({ createdAtMs: T0, updatedAtMs: T0 });
        const b = experimentRecord({ workload: 'query', createdAtMs: T0 + 1, updatedAtMs: T0 + 1 });
        await store.experiments.put(a);
        await store.experiments.put(b);
        const running: ExperimentRecord = {
          ...a,
          status: 'regressed',
          updatedAtMs: T0 + 5000,
          trials: [{ index: 0, attempt: 1, status: 'completed', startedAtMs: T0, endedAtMs: T0 + 4000, details: { slots: { control: 'B', treatment: 'A' } } }],
          verdict: { overall: 'regression', metrics: [{ name: 'latency_p99', effect: 0.051 }] },
        };
        await store.experiments.put(running);
        expect(await store.experiments.get(a.id)).toEqual(running);
        expect(await store.experiments.get('exp-missing')).toBeUndefined();
        expect((await store.experiments.list()).map((r) => r.id)).toEqual([b.id, a.id]);
        expect((await store.experiments.list({ workload: 'ranking' })).map((r) => r.id)).toEqual([a.id]);
        expect((await store.experiments.list({ status: 'queued' })).map((r) => r.id)).toEqual([b.id]);
        expect((await store.experiments.list({ status: 'regressed' })).map((r) => r.status)).toEqual(['regressed']);
        expect(await store.experiments.list({ limit: 1 })).toHaveLength(1);
      }));

    it('pages and filters listings by workload, statuses, kind, stage, change, outcome and time, on the latest version only', () =>
      withStore(async (store) => {
        const records = Array.from({ length: 12 }, (_, i) =>
          experimentRecord({
            id: `exp-page-${String(i).padStart(2, '0')}`,
            workload: i % 3 === 0 ? 'query' : 'ranking',
            createdAtMs: T0 + Math.floor(i / 2) * 1000, // pairs share a creation time: the id breaks the tie
            updatedAtMs: T0 + i,
            spec: { kind: i % 4 === 0 ? 'aa' : 'experiment', stage: i % 2 === 0 ? 'diff' : 'land', change: `c${i % 5}` },
          }),
        );
        for (const r of records) await store.experiments.put(r);
        // A later version moves two experiments on: filters see only the latest.
        await store.experiments.put({ ...records[5]!, status: 'regressed', updatedAtMs: T0 + 100, verdict: { outcome: 'regressed' } });
        await store.experiments.put({ ...records[7]!, status: 'passed', updatedAtMs: T0 + 100, verdict: { outcome: 'passed' } });
        const ids = async (query: Parameters<typeof store.experiments.list>[0]): Promise<string[]> => (await store.experiments.list(query)).map((r) => r.id);
        const newest = records.map((r) => r.id).reverse();
        expect(await ids({})).toEqual(newest);
        expect(await ids({ limit: 5, offset: 0 })).toEqual(newest.slice(0, 5));
        expect(await ids({ limit: 5, offset: 10 })).toEqual(newest.slice(10));
        expect(await ids({ offset: 11 })).toEqual(newest.slice(11));
        expect(await store.experiments.count({})).toBe(12);
        expect(await store.experiments.count({ limit: 1, offset: 3 })).toBe(12);
        expect(await ids({ status: 'queued', limit: 3 })).toEqual(newest.filter((id) => id !== 'exp-page-05' && id !== 'exp-page-07').slice(0, 3));
        expect(await ids({ status: ['regressed', 'passed'] })).toEqual(['exp-page-07', 'exp-page-05']);
        expect(await ids({ status: [] })).toEqual([]);
        expect(await ids({ outcome: 'regressed' })).toEqual(['exp-page-05']);
        expect(await store.experiments.count({ status: 'queued' })).toBe(10);
        expect(await ids({ workload: 'query' })).toEqual(['exp-page-09', 'exp-page-06', 'exp-page-03', 'exp-page-00']);
        expect(await ids({ kind: 'aa' })).toEqual(['exp-page-08', 'exp-page-04', 'exp-page-00']);
        expect(await ids({ stage: 'land', workload: 'ranking' })).toEqual(['exp-page-11', 'exp-page-07', 'exp-page-05', 'exp-page-01']);
        expect(await ids({ change: 'c2' })).toEqual(['exp-page-07', 'exp-page-02']);
        expect(await ids({ sinceMs: T0 + 2000, untilMs: T0 + 4000 })).toEqual(['exp-page-07', 'exp-page-06', 'exp-page-05', 'exp-page-04']);
        expect(await store.experiments.count({ change: 'nowhere' })).toBe(0);
        // The executor's records keep the change in their request.
        await store.experiments.put(
          experimentRecord({
            id: 'exp-page-req',
            createdAtMs: T0 - 1,
            spec: { kind: 'experiment', stage: 'diff', request: { workload: 'ranking', change: 'c-from-request' } },
          }),
        );
        expect(await ids({ change: 'c-from-request' })).toEqual(['exp-page-req']);
      }));

    it('reads only the event types asked for', () =>
      withStore(async (store) => {
        const id = `exp-${randomUUID()}`;
        for (const [i, type] of ['status', 'progress', 'progress', 'cancel-requested', 'lease'].entries())
          await store.experiments.appendEvent({ experimentId: id, timeMs: T0 + i, type, message: `${type} ${i}` });
        expect((await store.experiments.events(id, { types: ['cancel-requested', 'lease'] })).map((e) => e.message)).toEqual(['cancel-requested 3', 'lease 4']);
        expect(await store.experiments.events(id, { types: [] })).toEqual([]);
        expect(await store.experiments.events(id)).toHaveLength(5);
      }));

    it('keeps experiment events in the order they happened', () =>
      withStore(async (store) => {
        const id = `exp-${randomUUID()}`;
        await store.experiments.appendEvent({ experimentId: id, timeMs: T0, type: 'status', message: 'queued' });
        await store.experiments.appendEvent({ experimentId: id, timeMs: T0 + 10, type: 'status', message: 'running', data: { worker: 'w1' } });
        await store.experiments.appendEvent({ experimentId: id, timeMs: T0 + 10, type: 'trial-started', data: { trial: 0 } });
        await store.experiments.appendEvent({ experimentId: `exp-${randomUUID()}`, timeMs: T0, type: 'status' });
        expect(await store.experiments.events(id)).toEqual([
          { experimentId: id, timeMs: T0, type: 'status', message: 'queued' },
          { experimentId: id, timeMs: T0 + 10, type: 'status', message: 'running', data: { worker: 'w1' } },
          { experimentId: id, timeMs: T0 + 10, type: 'trial-started', data: { trial: 0 } },
        ]);
      }));

    it('stores detector observations, including checks with no value', () =>
      withStore(async (store) => {
        const id = `exp-${randomUUID()}`;
        await store.observations.append([
          { experimentId: id, detector: 'restarts', timeMs: T0 + 2, value: 3, baseline: 1, verdict: 'violation' },
          { experimentId: id, detector: 'restarts', timeMs: T0 + 1, value: null, baseline: null, verdict: 'error', message: 'ECONNREFUSED' },
          { experimentId: id, detector: 'errors', timeMs: T0, value: 0, baseline: 0, verdict: 'clear' },
        ]);
        expect(await store.observations.read(id, { detector: 'restarts' })).toEqual([
          { experimentId: id, detector: 'restarts', timeMs: T0 + 1, value: null, baseline: null, verdict: 'error', message: 'ECONNREFUSED' },
          { experimentId: id, detector: 'restarts', timeMs: T0 + 2, value: 3, baseline: 1, verdict: 'violation' },
        ]);
        expect(await store.observations.read(id)).toHaveLength(3);
      }));

    it('answers the config consumption index with the latest read per setting', () =>
      withStore(async (store) => {
        const day = 86_400_000;
        await store.configReads.append([
          { service: 'ranking', file: 'conf/rank.yaml', setting: 'model.layers', timeMs: T0 - 10 * day },
          { service: 'ranking', file: 'conf/rank.yaml', setting: 'model.layers', timeMs: T0 - 2 * day },
          { service: 'ranking', file: 'conf/rank.yaml', setting: '', timeMs: T0 - day },
          { service: 'query', file: "conf/it's.json", setting: 'a\\b', timeMs: T0 },
        ]);
        expect(await store.configReads.latest({ sinceMs: T0 - 7 * day })).toEqual([
          { service: 'query', file: "conf/it's.json", setting: 'a\\b', lastReadMs: T0 },
          { service: 'ranking', file: 'conf/rank.yaml', setting: '', lastReadMs: T0 - day },
          { service: 'ranking', file: 'conf/rank.yaml', setting: 'model.layers', lastReadMs: T0 - 2 * day },
        ]);
        expect(await store.configReads.latest({ sinceMs: 0, service: 'ranking', file: 'conf/rank.yaml' })).toHaveLength(2);
        expect(await store.configReads.latest({ sinceMs: T0 + 1 })).toEqual([]);
      }));

    it('filters dependency error records by time, dependency, experiment and implicated jobs', () =>
      withStore(async (store) => {
        const hostile = "pred'iction\\\n--; DROP TABLE x";
        const records = [
          errorRecord({ timeMs: T0, experimentId: 'exp-1', arm: 'treatment', job: 'job-t' }),
          errorRecord({ timeMs: T0 + 1, experimentId: 'exp-1', arm: 'control', job: 'job-c' }),
          errorRecord({ timeMs: T0 + 2, jobs: ['job-x', 'job-t'] }),
          errorRecord({ timeMs: T0 + 3, dependency: hostile, experimentId: 'exp-2', job: 'job-z' }),
        ];
        await store.errors.append(records);
        expect(await store.errors.query({ sinceMs: T0 })).toEqual(records);
        expect(await store.errors.query({ sinceMs: T0 + 1, untilMs: T0 + 3 })).toEqual(records.slice(1, 3));
        expect(await store.errors.query({ sinceMs: 0, jobs: ['job-t'] })).toEqual([records[0], records[2]]);
        expect(await store.errors.query({ sinceMs: 0, jobs: [] })).toEqual([]);
        expect(await store.errors.query({ sinceMs: 0, experimentId: 'exp-1', dependency: 'prediction' })).toEqual(records.slice(0, 2));
        expect(await store.errors.query({ sinceMs: 0, dependency: hostile })).toEqual([records[3]]);
        expect(await store.errors.query({ sinceMs: 0, dependency: "x' OR '1'='1" })).toEqual([]);
      }));

    it('round-trips hostile strings byte for byte', () =>
      withStore(async (store) => {
        const nasty = ["'", '\\', "\\'", '\0', '\n\r\t', '\u0001\u001f\u007f', 'ünïcødé ☕ 𝔘', "'); DROP TABLE corpus; --", '`backtick`', '{"json":true}'];
        const records = nasty.map((text, i) => corpusRecord({ timeMs: T0 + i, path: `/search?q=${text}`, headers: { 'x-text': text }, method: 'GET' }));
        await store.corpus.append(records);
        expect(await collect(store.corpus.read('ranking', { sinceMs: 0 }))).toEqual(records);
        const id = `exp-${randomUUID()}`;
        await store.observations.append(
          nasty.map((text, i) => ({ experimentId: id, detector: text, timeMs: T0 + i, value: i, baseline: 0, verdict: 'clear' as const, message: text })),
        );
        for (const text of nasty) expect((await store.observations.read(id, { detector: text })).map((o) => o.message)).toEqual([text]);
      }));
  });
}
