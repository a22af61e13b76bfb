import { createServer, type IncomingMessage, type RequestListener } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { systemClock, type RequestOutcome } from '../../core/index.js';
import { firstSides, intendedTime, pairedReplay, pairsInWindow, phaseOf, type PairedReplayOptions } from '../../replayer/index.js';
import { simpleCorpus, stream } from '../support/corpus.js';

interface Counting {
  readonly url: string;
  readonly seen: IncomingMessage['headers'][];
}

async function countingServer(handler?: RequestListener): Promise<Counting> {
  const seen: IncomingMessage['headers'][] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    if (handler) return handler(req, res);
    req.resume();
    res.end(`ok ${req.url}`);
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  onTestFinished(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function options(control: string, treatment: string, overrides: Partial<PairedReplayOptions> & { outcomes: RequestOutcome[] }): PairedReplayOptions {
  const { outcomes, ...rest } = overrides;
  return {
    records: stream(simpleCorpus(40)),
    arms: { control, treatment },
    ratePerSecond: 200,
    // Ample, so no pair is dropped even on a loaded machine; the cap has its own test.
    concurrency: 256,
    timeoutMs: 5_000,
    warmupMs: 0,
    measureMs: 10_000,
    seed: 42,
    identity: { experimentId: 'exp-1', trial: 3, attempt: 1, headerPrefix: 'x-tandem-', jobs: { control: 'exp-1.control', treatment: 'exp-1.treatment' } },
    clock: systemClock,
    onOutcome: (o) => outcomes.push(o),
    ...rest,
  };
}

describe('open-loop schedule', () => {
  it('is a pure function of start, rate and index', () => {
    expect(intendedTime(1_000, 200, 0)).toBe(1_000);
    expect(intendedTime(1_000, 200, 7)).toBe(1_035);
    expect(intendedTime(0, 3, 3)).toBe(1_000);
    expect(pairsInWindow(200, 1_000)).toBe(200);
    expect(pairsInWindow(3, 1_000)).toBe(3);
    expect(phaseOf(1_099, 1_000, 100)).toBe('warmup');
    expect(phaseOf(1_100, 1_000, 100)).toBe('measure');
    // Floating point: a start value for which start + 100 - start comes back below 100 must not change the phase.
    const start = 1_000.041_1;
    expect(intendedTime(start, 100, 10) - start).toBeLessThan(100);
    expect(phaseOf(intendedTime(start, 100, 10), start, 100)).toBe('measure');
    expect(phaseOf(intendedTime(start, 100, 9), start, 100)).toBe('warmup');
  });

  it('chooses the first side reproducibly from the seed, and balanced', () => {
    const a = firstSides(7);
    const b = firstSides(7);
    const sequence = Array.from({ length: 10_000 }, () => a());
    expect(Array.from({ length: 10_000 }, () => b())).toEqual(sequence);
    const controlFirst = sequence.filter((s) => s === 'control').length;
    // Binomial(10000, 0.5), 99.9% interval: 5000 ± 165.
    expect(Math.abs(controlFirst - 5_000)).toBeLessThan(165);
    const other = firstSides(8);
    expect(Array.from({ length: 100 }, () => other())).not.toEqual(sequence.slice(0, 100));
  });
});

describe('paired replay', () => {
  it('sends each record to both arms exactly once, with identity headers and the seeded first side', async () => {
    const control = await countingServer();
    const treatment = await countingServer();
    const outcomes: RequestOutcome[] = [];
    const result = await pairedReplay(options(control.url, treatment.url, { outcomes }));
    expect(result).toMatchObject({ sentPairs: 40, measuredPairs: 40, droppedPairs: 0, corpusExhausted: true, cancelled: false });
    // The corpus ran out: the rest of the window's pairs are cut, and said to be.
    expect(result.duePairs).toBe(2_000);
    expect(result.cutPairs).toBe(1_960);
    for (const server of [control, treatment]) {
      const ids = server.seen.map((h) => h['x-tandem-record']);
      expect(new Set(ids).size).toBe(40);
      expect(ids.sort()).toEqual(
        simpleCorpus(40)
          .map((r) => r.id)
          .sort(),
      );
      expect(server.seen.every((h) => h['x-tandem-experiment'] === 'exp-1' && h['x-tandem-trial'] === '3')).toBe(true);
      expect(server.seen.every((h) => h.accept === 'application/json')).toBe(true);
    }
    expect(control.seen.every((h) => h['x-tandem-arm'] === 'control' && h['x-tandem-job'] === 'exp-1.control')).toBe(true);
    expect(treatment.seen.every((h) => h['x-tandem-arm'] === 'treatment')).toBe(true);
    expect(outcomes).toHaveLength(80);
    expect(outcomes.filter((o) => !(o.status === 200 && o.errorClass === '' && o.bodyHash.length === 40 && o.latencyMs > 0))).toEqual([]);
    // The outcomes' first flags replay the seeded sequence, pair by pair.
    const sides = firstSides(42);
    const expected = simpleCorpus(40).map((r) => [r.id, sides()] as const);
    for (const [id, first] of expected) expect(outcomes.find((o) => o.recordId === id && o.first)?.arm).toBe(first);
    expect(result.firstSide.control + result.firstSide.treatment).toBe(40);
  });

  it('excludes warm-up outcomes and stops at the end of the measurement window', async () => {
    const control = await countingServer();
    const treatment = await countingServer();
    const outcomes: RequestOutcome[] = [];
    const result = await pairedReplay(
      options(control.url, treatment.url, { outcomes, records: stream(simpleCorpus(1_000)), ratePerSecond: 100, warmupMs: 100, measureMs: 200 }),
    );
    // 30 pairs are due; on a busy machine the window may end behind schedule and cut its last one or two
    // (a real clock: a CI run once sent 29), and every due pair is accounted for exactly either way.
    expect(result.duePairs).toBe(30);
    expect(result.sentPairs + result.droppedPairs + result.cutPairs).toBe(30);
    expect(result.droppedPairs).toBe(0);
    expect(result.sentPairs).toBeGreaterThanOrEqual(25);
    expect(result.warmupPairs).toBe(10);
    expect(result.measuredPairs).toBe(result.sentPairs - 10);
    expect(result.corpusExhausted).toBe(false);
    expect(outcomes).toHaveLength(2 * result.measuredPairs);
    const firstMeasured = Math.min(...outcomes.map((o) => o.intendedMs));
    expect(firstMeasured - result.startedAtMs).toBeGreaterThanOrEqual(100 - 1e-6);
    expect(outcomes.map((o) => o.recordId).sort()).toEqual(
      simpleCorpus(result.sentPairs)
        .slice(10)
        .flatMap((r) => [r.id, r.id])
        .sort(),
    );
  });

  it("measures a slow arm's latency from the intended send time, so its queueing delay counts", async () => {
    const control = await countingServer();
    // The treatment serves one request at a time, 20 ms each: at 100 requests/s a queue builds.
    let busy = Promise.resolve();
    const treatment = await countingServer((req, res) => {
      req.resume();
      busy = busy.then(
        () =>
          new Promise<void>((resolve) =>
            setTimeout(() => {
              res.end('slow');
              resolve();
            }, 20),
          ),
      );
    });
    const outcomes: RequestOutcome[] = [];
    await pairedReplay(options(control.url, treatment.url, { outcomes, records: stream(simpleCorpus(30)), ratePerSecond: 100 }));
    const slow = outcomes
      .filter((o) => o.arm === 'treatment')
      .map((o) => o.latencyMs)
      .sort((a, b) => a - b);
    // 30 requests of 20 ms arriving every 10 ms: the last waits for about 29 × 20 − 29 × 10 = 290 ms.
    expect(slow.at(-1)!).toBeGreaterThan(200);
    expect(slow[0]!).toBeGreaterThanOrEqual(20);
  });

  it('drops and counts pairs when an arm is at its in-flight cap, instead of slowing down', async () => {
    const control = await countingServer();
    const treatment = await countingServer((req) => req.resume()); // never answers
    const outcomes: RequestOutcome[] = [];
    const result = await pairedReplay(
      options(control.url, treatment.url, {
        outcomes,
        records: stream(simpleCorpus(1_000)),
        ratePerSecond: 200,
        measureMs: 1_000,
        concurrency: 5,
        timeoutMs: 300,
      }),
    );
    // 200 pairs fall due in the window; each is sent on time, dropped, or cut at the window's end — counted exactly.
    expect(result.duePairs).toBe(200);
    expect(result.sentPairs + result.droppedPairs + result.cutPairs).toBe(200);
    // At most 5 in flight, each held 300 ms: about 20 sent in the second; the rest dropped when due (or cut at
    // the end when a busy machine ran the schedule late: how many of each is a matter of speed, not tested).
    expect(result.sentPairs).toBeLessThanOrEqual(25);
    expect(result.droppedPairs).toBeGreaterThan(0);
    expect(result.droppedPairs + result.cutPairs).toBeGreaterThanOrEqual(175);
    expect(result.errors.treatment.timeout).toBe(result.sentPairs);
    expect(outcomes.filter((o) => o.arm === 'treatment').every((o) => o.errorClass === 'timeout' && o.status === 0)).toBe(true);
    // A dropped pair consumes no record: what was sent is the start of the corpus, once each.
    expect(treatment.seen.map((h) => h['x-tandem-record']).sort()).toEqual(
      simpleCorpus(result.sentPairs)
        .map((r) => r.id)
        .sort(),
    );
  });

  it('stops sending as soon as it is cancelled, aborts in-flight requests, and keeps what was measured', async () => {
    const control = await countingServer();
    const treatment = await countingServer((req) => req.resume()); // hangs, so requests are in flight at the abort
    const cancel = new AbortController();
    const outcomes: RequestOutcome[] = [];
    let sentAtAbort = -1;
    const replay = pairedReplay(
      options(control.url, treatment.url, {
        outcomes,
        records: stream(simpleCorpus(10_000)),
        ratePerSecond: 500,
        progressIntervalMs: 10,
        signal: cancel.signal,
        onProgress: (p) => {
          // Cancel once some control answers are measured, so "keeps what was measured" has something to keep.
          if (outcomes.length >= 5 && !cancel.signal.aborted) {
            sentAtAbort = p.sentPairs;
            cancel.abort(new Error('monitor says stop'));
          }
        },
      }),
    );
    const result = await replay;
    expect(result.cancelled).toBe(true);
    // The pair being scheduled when the abort came is the last one: nothing is sent after it.
    expect(result.sentPairs).toBeLessThanOrEqual(sentAtAbort + 1);
    expect(treatment.seen.length).toBeLessThanOrEqual(sentAtAbort + 1);
    expect(outcomes.filter((o) => o.arm === 'control').length).toBeGreaterThan(0);
    expect(outcomes.every((o) => o.errorClass !== 'cancelled')).toBe(true);
    expect(result.errors.treatment.cancelled).toBeGreaterThan(0);
  });

  it('skips records whose body was not stored', async () => {
    const control = await countingServer();
    const treatment = await countingServer();
    const records = simpleCorpus(6).map((r, i) => (i % 2 ? { ...r, bodyTruncated: true } : r));
    const result = await pairedReplay(options(control.url, treatment.url, { outcomes: [], records: stream(records) }));
    expect(result.skippedTruncated).toBe(3);
    expect(control.seen.map((h) => h['x-tandem-record'])).toEqual(['rec-0', 'rec-2', 'rec-4']);
  });
});

describe('several processes per arm', () => {
  it('sends every record to every process of both arms, each outcome naming its process, the pair counted once', async () => {
    const control = await Promise.all([countingServer(), countingServer(), countingServer()]);
    const treatment = await Promise.all([countingServer(), countingServer(), countingServer()]);
    const outcomes: RequestOutcome[] = [];
    const result = await pairedReplay(options('', '', { outcomes, arms: { control: control.map((c) => c.url), treatment: treatment.map((t) => t.url) } }));
    expect(result.sentPairs).toBe(40);
    // Every process saw every record: the same requests, so their CPU per request can be compared.
    for (const server of [...control, ...treatment])
      expect(server.seen.map((h) => h['x-tandem-record']).sort()).toEqual(
        simpleCorpus(40)
          .map((r) => r.id)
          .sort(),
      );
    for (const arm of ['control', 'treatment'] as const) {
      for (const process of [0, 1, 2]) expect(outcomes.filter((o) => o.arm === arm && o.process === process)).toHaveLength(40);
    }
    expect(outcomes.every((o) => o.status === 200)).toBe(true);
  });

  it('leaves outcomes of an arm of one process without a process index', async () => {
    const [control, treatment] = await Promise.all([countingServer(), countingServer()]);
    const outcomes: RequestOutcome[] = [];
    await pairedReplay(options(control.url, treatment.url, { outcomes, measureMs: 100 }));
    expect(outcomes.length).toBeGreaterThan(0);
    expect(outcomes.every((o) => o.process === undefined)).toBe(true);
  });
});
