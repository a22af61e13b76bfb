import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../core/clock.js';
import {
  cpuSecondsPerRequestBetween,
  measureRequestCost,
  probeRequestCost,
  readRanking,
  sampleOf,
  type RankingReading,
} from '../../examples/demo/request-cost.js';
import type { Clock } from '../../core/clock.js';
import type { CorpusRecord } from '../../core/model.js';

describe('what a ranking request costs, read while the demo records', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is the CPU over the requests answered between two readings, and unknown from too few requests or a reading that went backwards', () => {
    expect(cpuSecondsPerRequestBetween({ cpuSeconds: 1, requests: 100 }, { cpuSeconds: 1.9, requests: 120 })).toBeCloseTo(0.045, 9);
    expect(cpuSecondsPerRequestBetween({ cpuSeconds: 1, requests: 100 }, { cpuSeconds: 1.9, requests: 119 })).toBeUndefined();
    expect(cpuSecondsPerRequestBetween({ cpuSeconds: 1, requests: 100 }, { cpuSeconds: 0.5, requests: 200 })).toBeUndefined();
    expect(cpuSecondsPerRequestBetween({ cpuSeconds: 1, requests: 200 }, { cpuSeconds: 2, requests: 100 })).toBeUndefined();
  });

  it('reads after the warm-up and again after the window, on the clock it is given', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'], now: 0 });
    const clock = systemClock;
    const readings: RankingReading[] = [
      { cpuSeconds: 0.5, requests: 40 },
      { cpuSeconds: 2.5, requests: 140 },
    ];
    const readAt: number[] = [];
    const cost = measureRequestCost({ read: async () => (readAt.push(clock.now()), readings.shift()), clock, warmUpMs: 1_000, windowMs: 2_000 });
    await vi.advanceTimersByTimeAsync(999);
    expect(readAt).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(readAt).toEqual([1_000]);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await cost).toBeCloseTo(0.02, 9);
    expect(readAt).toEqual([1_000, 3_000]);
    const unread = measureRequestCost({ read: async () => undefined, clock, warmUpMs: 1_000, windowMs: 2_000 });
    await vi.advanceTimersByTimeAsync(3_000);
    expect(await unread).toBeUndefined();
  });

  it('reads a process’s CPU from /proc and the POST /rank requests from the service’s /metrics, and nothing from a process that is gone', async () => {
    const server = createServer((_req, res) => {
      res.end(
        '# TYPE requests_total counter\nrequests_total{service="ranking",route="POST /rank",status="200"} 57\nrequests_total{service="ranking",route="GET /healthz",status="200"} 9\n',
      );
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const reading = await readRanking(url, process.pid);
      expect(reading?.requests).toBe(57);
      expect(reading?.cpuSeconds).toBeGreaterThan(0);
      // pid_max is at most 2^22: no process has this id.
      expect(await readRanking(url, 2 ** 22 + 1)).toBeUndefined();
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('probes with recorded requests sent straight to ranking, counting only those answered in its window', async () => {
    // A ranking stand-in in this process: it answers POST /rank after spending CPU, and counts the answers on /metrics.
    let answered = 0;
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      if (req.url === '/metrics') return res.end(`requests_total{route="POST /rank"} ${answered}\n`);
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString());
        const until = process.cpuUsage().user + 3_000;
        while (process.cpuUsage().user < until);
        answered++;
        res.end('{}');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Pacing is not what is tested: a clock that never waits sends each second's requests at once.
    const instant: Clock = { now: () => 0, monotonic: () => 0, sleep: async () => undefined };
    const records = [1, 2, 3].map((n): CorpusRecord => ({
      id: `r${n}`,
      tier: 'ranking',
      timeMs: n,
      method: 'POST',
      path: '/rank',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(`{"n":${n}}`).toString('base64'),
      bodyTruncated: false,
      sampleRate: 1,
      sampleMode: 'uniform',
    }));
    try {
      const cost = await probeRequestCost({ rankingUrl: url, pid: process.pid, records, clock: instant });
      // 10 requests to settle, then 40 counted; the records taken in turn.
      expect(answered).toBe(50);
      expect(bodies.slice(0, 4)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}', '{"n":1}']);
      // At least the 3 ms of CPU each answer spent.
      expect(cost).toBeGreaterThanOrEqual(0.003);
      // From too few answers counted the probe reads nothing: a stand-in whose counter moves by one per reading.
      let readings = 0;
      const few = createServer((req, res) => res.end(req.url === '/metrics' ? `requests_total{route="POST /rank"} ${readings++}\n` : '{}'));
      few.listen(0, '127.0.0.1');
      await once(few, 'listening');
      try {
        expect(
          await probeRequestCost({ rankingUrl: `http://127.0.0.1:${(few.address() as AddressInfo).port}`, pid: process.pid, records, clock: instant }),
        ).toBeUndefined();
      } finally {
        few.closeAllConnections();
        await new Promise<void>((resolve) => few.close(() => resolve()));
      }
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('samples evenly across the corpus, first to last, and takes a small corpus whole', () => {
    const corpus = Array.from({ length: 200 }, (_, i) => i);
    expect(sampleOf(corpus, 4)).toEqual([0, 50, 100, 150]);
    expect(sampleOf(corpus, 50)).toHaveLength(50);
    expect(new Set(sampleOf(corpus, 50)).size).toBe(50);
    expect(sampleOf([1, 2, 3], 50)).toEqual([1, 2, 3]);
  });
});
