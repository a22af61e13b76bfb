import { connect } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ndcgAtK } from '../../harness/index.js';
import { generateTraffic, metricTotal, parseFaults, productionRequest, startStack, type Stack, type StackOptions } from '../../examples/stack/index.js';
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pollUntil } from '../support/poll.js';

async function stackFor(options: StackOptions = {}): Promise<Stack> {
  const stack = await startStack(options);
  onTestFinished(() => stack.stop());
  return stack;
}

async function recommend(stack: Stack, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const response = await fetch(`${stack.urls.query}/recommend`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
  return { status: response.status, json: await response.json() };
}

function portRefuses(url: string): Promise<boolean> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

const identity = {
  'x-tandem-experiment': 'exp-42',
  'x-tandem-arm': 'treatment',
  'x-tandem-trial': '3',
  'x-tandem-job': 'ranking-treatment-1',
  baggage: 'tandem.experiment=exp-42',
};

describe('example stack', () => {
  it('answers deterministically: the same request gives the same ranked list, across stacks and process boundaries', async () => {
    const a = await stackFor();
    const b = await stackFor({ isolate: ['ranking', 'prediction'] });
    for (let i = 0; i < 12; i++) {
      const request = productionRequest(i, 3);
      const [first, again, other] = await Promise.all([recommend(a, request), recommend(a, request), recommend(b, request)]);
      expect(first.status).toBe(200);
      expect(first.json.items.length).toBe(request.k);
      expect(again.json).toEqual(first.json);
      expect(other.json).toEqual(first.json);
    }
  });

  it('crashes and restarts a prediction worker only on the shard that received a malformed tensor, and records the caller', async () => {
    const stack = await stackFor({ faults: parseFaults('malformed-tensor=rank-video') });
    const failed = await recommend(stack, { surface: 'video', viewer: 5 }, identity);
    expect(failed.status).toBe(502);
    const restarts = await Promise.all(stack.urls.shards.map((url) => metricTotal(url, 'worker_restarts_total')));
    expect(restarts.filter((n) => n === 1)).toHaveLength(1);
    expect(restarts.reduce((a, b) => a + b)).toBe(1);
    const victim = restarts.indexOf(1);
    const { records } = (await (await fetch(`${stack.urls.shards[victim]}/errors?experiment=exp-42`)).json()) as { records: any[] };
    expect(records).toEqual([
      expect.objectContaining({
        dependency: 'prediction',
        shard: `shard-${victim}`,
        kind: 'contract-violation',
        experimentId: 'exp-42',
        arm: 'treatment',
        trial: '3',
        job: 'ranking-treatment-1',
        jobs: ['ranking-treatment-1'],
      }),
    ]);
    expect(records[0].message).toMatch(/tensor shape \[1, 16\] violates the model contract \[\d+, 16\]/);
    // Other surfaces use other model configs and keep working, served by the remaining workers.
    for (let i = 0; i < 8; i++) expect((await recommend(stack, { surface: 'home', viewer: i })).status).toBe(200);
    const otherShardRecords = await Promise.all(
      stack.urls.shards.filter((_, i) => i !== victim).map(async (url) => ((await (await fetch(`${url}/errors`)).json()) as { records: unknown[] }).records),
    );
    expect(otherShardRecords.flat()).toEqual([]);
  });

  it('the latency fault adds exactly its share of ranking CPU work and changes no result', async () => {
    const clean = await stackFor();
    const slow = await stackFor({ faults: { latencyPercent: 50 } });
    for (let i = 0; i < 10; i++) {
      const request = productionRequest(i, 4);
      expect((await recommend(slow, request)).json).toEqual((await recommend(clean, request)).json);
    }
    const [cleanWork, slowWork] = await Promise.all([metricTotal(clean.urls.ranking, 'work_units_total'), metricTotal(slow.urls.ranking, 'work_units_total')]);
    expect(slowWork / cleanWork).toBeCloseTo(1.5, 6);
  });

  it('the latent-timeout fault crashes ranking workers when requests time out under concurrency; the clean build does not', async () => {
    // A feature service that answers after 30 ms, so a 5 ms deadline always fires first.
    let received = 0;
    let ended = 0;
    const slowFeatures = createServer((req, res) => {
      received++;
      req.resume();
      res.once('close', () => ended++);
      req.once('end', () => setTimeout(() => res.end(JSON.stringify({ features: [] })), 30));
    }).listen(0, '127.0.0.1');
    await once(slowFeatures, 'listening');
    onTestFinished(() => new Promise<void>((resolve) => slowFeatures.close(() => resolve())));
    const featuresUrl = `http://127.0.0.1:${(slowFeatures.address() as AddressInfo).port}`;
    const { startService } = await import('../../examples/stack/index.js');
    const burst = async (latentTimeout: boolean): Promise<{ restarts: number; statuses: number[] }> => {
      const receivedBefore = received;
      const ranking = await startService('ranking', {
        featuresUrl,
        inferenceUrl: 'http://127.0.0.1:1',
        faults: latentTimeout ? { latentTimeout } : {},
        restartDelayMs: 60_000,
      });
      onTestFinished(() => ranking.close());
      const statuses = await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const response = await fetch(`${ranking.urls[0]}/rank`, {
            method: 'POST',
            headers: { 'x-deadline-ms': '5' },
            body: JSON.stringify({ surface: 'home', viewer: i, query: '', candidates: [1, 2, 3], k: 2 }),
          });
          return response.status;
        }),
      );
      // The feature calls end 30 ms after the timeouts (or are aborted); only then is "no crash" a result.
      await pollUntil(
        async () => ({ seen: received - receivedBefore, open: received - ended }),
        ({ seen, open }) => seen > 0 && open === 0,
        { what: 'the feature calls to end' },
      );
      const restarts = latentTimeout
        ? await pollUntil(
            () => metricTotal(ranking.urls[0]!, 'worker_restarts_total'),
            (n) => n > 0,
            { what: 'a ranking worker restart' },
          )
        : await metricTotal(ranking.urls[0]!, 'worker_restarts_total');
      return { restarts, statuses };
    };
    const clean = await burst(false);
    expect(clean.statuses.every((s) => s === 504)).toBe(true);
    expect(clean.restarts).toBe(0);
    const faulty = await burst(true);
    // Timeouts, plus — on a loaded machine — requests caught on a worker as it crashed (500) or while both were down (503).
    expect(faulty.statuses.filter((s) => s === 504).length).toBeGreaterThan(0);
    expect(faulty.statuses.every((s) => s === 504 || s === 500 || s === 503)).toBe(true);
    expect(faulty.restarts).toBeGreaterThan(0);
  });

  it('the error-rate fault fails a deterministic share of requests', async () => {
    const stack = await stackFor({ faults: { errorRate: 0.3 } });
    const requests = Array.from({ length: 150 }, (_, i) => ({ surface: 'search', viewer: i, query: `q${i}` }));
    const first = await Promise.all(requests.map((r) => recommend(stack, r).then((x) => x.status)));
    const again = await Promise.all(requests.map((r) => recommend(stack, r).then((x) => x.status)));
    expect(again).toEqual(first);
    const failures = first.filter((s) => s !== 200).length;
    // Binomial(150, 0.3): mean 45, sd 5.6; ±4 sd.
    expect(failures).toBeGreaterThan(22);
    expect(failures).toBeLessThan(68);
  });

  it('each degradation level does less work and loses more quality than the one before', async () => {
    const stack = await stackFor();
    const requests = Array.from({ length: 30 }, (_, i) => ({ ...productionRequest(i, 9), k: 10 }));
    const reference = await Promise.all(requests.map(async (r) => (await recommend(stack, r)).json.items.map((item: { id: number }) => item.id)));
    const measure = async (levels: string): Promise<{ work: number; ndcg: number }> => {
      const before =
        (await metricTotal(stack.urls.ranking, 'work_units_total')) +
        (await Promise.all(stack.urls.shards.map((u) => metricTotal(u, 'work_units_total')))).reduce((a, b) => a + b);
      let ndcg = 0;
      for (const [i, r] of requests.entries()) {
        const { json } = await recommend(stack, r, { 'x-tandem-levels': levels });
        ndcg += ndcgAtK(
          json.items.map((item: { id: number }) => item.id),
          reference[i]!,
          10,
        );
      }
      const after =
        (await metricTotal(stack.urls.ranking, 'work_units_total')) +
        (await Promise.all(stack.urls.shards.map((u) => metricTotal(u, 'work_units_total')))).reduce((a, b) => a + b);
      return { work: after - before, ndcg: ndcg / requests.length };
    };
    const ranking = [];
    for (let level = 0; level <= 5; level++) ranking.push(await measure(`ranking=${level}`));
    const prediction = [];
    for (let level = 0; level <= 3; level++) prediction.push(await measure(`prediction=${level}`));
    for (const series of [ranking, prediction]) {
      expect(series[0]!.ndcg).toBe(1);
      for (let i = 1; i < series.length; i++) {
        expect(series[i]!.work).toBeLessThan(series[i - 1]!.work);
        expect(series[i]!.ndcg).toBeLessThan(series[i - 1]!.ndcg);
      }
    }
  });

  it('enforces max(local, assigned, requested) and applies a test-scenario header only to tagged requests', async () => {
    const stack = await stackFor();
    const request = { surface: 'home', viewer: 11, k: 10 };
    const untagged = await recommend(stack, request);
    expect(untagged.json.levels).toEqual({ ranking: 0, prediction: 0 });
    const tagged = await recommend(stack, request, { 'x-tandem-levels': 'ranking=3,prediction=2' });
    expect(tagged.json.levels).toEqual({ ranking: 3, prediction: 2 });
    expect(tagged.json.items).not.toEqual(untagged.json.items);
    expect((await recommend(stack, request)).json).toEqual(untagged.json);
    const assign = await fetch(`${stack.urls.ranking}/level`, { method: 'PUT', body: JSON.stringify({ level: 2 }) });
    expect(await assign.json()).toEqual({ assigned: 2 });
    expect((await recommend(stack, request)).json.levels.ranking).toBe(2);
    expect((await recommend(stack, request, { 'x-tandem-levels': 'ranking=1' })).json.levels.ranking).toBe(2);
    expect((await recommend(stack, request, { 'x-tandem-levels': 'ranking=4' })).json.levels.ranking).toBe(4);
    expect(await (await fetch(`${stack.urls.ranking}/level`, { method: 'PUT', body: '{"level":-1}' })).json()).toEqual({
      error: 'body must be {"level": <integer >= 0>}',
    });
  });

  it('exposes Prometheus metrics and health on every service', async () => {
    const stack = await stackFor();
    await recommend(stack, { surface: 'home', viewer: 1 }, identity);
    for (const url of [stack.urls.query, stack.urls.ranking, stack.urls.features, stack.urls.gateway, ...stack.urls.shards]) {
      expect(await (await fetch(`${url}/healthz`)).json()).toMatchObject({ ok: true });
      const text = await (await fetch(`${url}/metrics`)).text();
      for (const name of ['requests_total', 'errors_total', 'request_duration_seconds_bucket', 'worker_restarts_total', 'load_factor', 'compute_seconds_total'])
        expect(text).toContain(name);
    }
    expect(await metricTotal(stack.urls.ranking, 'experiment_requests_total')).toBe(1);
    const lf = await metricTotal(stack.urls.ranking, 'load_factor');
    expect(lf).toBeGreaterThan(0);
  });

  it('answers bad input with 4xx and a message, never a crash', async () => {
    const stack = await stackFor();
    expect(await recommend(stack, { surface: 'nope', viewer: 1 })).toEqual({ status: 400, json: { error: 'surface must be one of home, video, search' } });
    const notJson = await fetch(`${stack.urls.query}/recommend`, { method: 'POST', body: '{"surface":' });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: string }).error).toMatch(/^body is not valid JSON/);
    const huge = await fetch(`${stack.urls.ranking}/rank`, { method: 'POST', body: 'x'.repeat(2_000_000) }).catch(() => undefined);
    if (huge) expect(huge.status).toBe(413);
    const badTensor = await fetch(`${stack.urls.shards[0]}/infer`, {
      method: 'POST',
      body: JSON.stringify({ model: 'rank-home', batch: 1, shape: [1, 16], data: 42 }),
    });
    expect(badTensor.status).toBe(400);
    expect(await metricTotal(stack.urls.shards[0]!, 'worker_restarts_total')).toBe(0);
    expect((await fetch(`${stack.urls.query}/nothing`)).status).toBe(404);
    expect(() => parseFaults('latency=abc')).toThrow('fault "latency" needs a number in [0, 10000], got "abc"');
    expect(() => parseFaults('meltdown')).toThrow(/unknown fault "meltdown"/);
  });

  it('stop() leaves no port open and no child process behind', async () => {
    const stack = await startStack({ isolate: ['query', 'ranking', 'features', 'gateway', 'prediction'] });
    expect(stack.pids).toHaveLength(5);
    // Each isolated service's own process id, as the demo reads ranking's CPU by it.
    expect(Object.keys(stack.pidOf).sort()).toEqual(['features', 'gateway', 'prediction', 'query', 'ranking']);
    expect(new Set(Object.values(stack.pidOf))).toEqual(new Set(stack.pids));
    expect((await recommend(stack, { surface: 'search', viewer: 1, query: 'q1' })).status).toBe(200);
    await stack.stop();
    const urls = [stack.urls.query, stack.urls.ranking, stack.urls.features, stack.urls.gateway, ...stack.urls.shards];
    expect(await Promise.all(urls.map(portRefuses))).toEqual(urls.map(() => true));
    for (const pid of stack.pids) expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    const inProcess = await startStack();
    expect(inProcess.pidOf).toEqual({});
    await inProcess.stop();
    expect(await Promise.all([inProcess.urls.query, ...inProcess.urls.shards].map(portRefuses))).toEqual([true, true, true, true, true]);
  });
});

describe('production traffic generator', () => {
  it('is a pure, realistic mix: surfaces, heavy and light requests, a few hot queries', () => {
    expect(productionRequest(17, 5)).toEqual(productionRequest(17, 5));
    const requests = Array.from({ length: 5_000 }, (_, i) => productionRequest(i, 5));
    const share = (surface: string): number => requests.filter((r) => r.surface === surface).length / requests.length;
    expect(share('home')).toBeCloseTo(0.5, 1);
    expect(share('video')).toBeCloseTo(0.3, 1);
    expect(share('search')).toBeCloseTo(0.2, 1);
    const queries = new Map<string, number>();
    for (const r of requests) if (r.query) queries.set(r.query, (queries.get(r.query) ?? 0) + 1);
    const counts = [...queries.values()].sort((a, b) => b - a);
    const searches = counts.reduce((a, b) => a + b);
    expect(counts.slice(0, 5).reduce((a, b) => a + b) / searches).toBeGreaterThan(0.25);
    expect(queries.size).toBeGreaterThan(50);
  });

  it('is bounded in count and in time', async () => {
    const stack = await stackFor();
    const byCount = await generateTraffic({ url: stack.urls.query, rate: 500, maxRequests: 40, maxDurationMs: 60_000 });
    expect(byCount).toMatchObject({ sent: 40, ok: 40, failed: 0 });
    const byTime = await generateTraffic({ url: stack.urls.query, rate: 100, maxRequests: 1_000_000, maxDurationMs: 300 });
    expect(byTime.sent).toBeLessThanOrEqual(30);
    expect(byTime.sent).toBeGreaterThan(0);
    const controller = new AbortController();
    controller.abort();
    expect((await generateTraffic({ url: stack.urls.query, rate: 100, maxRequests: 100, maxDurationMs: 10_000, signal: controller.signal })).sent).toBe(0);
  });

  it('stops sending once told it has sent enough, and waits for every answer', async () => {
    const stack = await stackFor();
    expect((await generateTraffic({ url: stack.urls.query, rate: 500, maxRequests: 100, maxDurationMs: 10_000, enough: () => true })).sent).toBe(0);
    // Asked before every send (and again after waiting for one): "enough" from the 21st question on.
    let asked = 0;
    const stopped = await generateTraffic({ url: stack.urls.query, rate: 500, maxRequests: 1_000, maxDurationMs: 60_000, enough: () => ++asked > 20 });
    expect(stopped.sent).toBeGreaterThanOrEqual(10);
    expect(stopped.sent).toBeLessThanOrEqual(20);
    expect(stopped).toMatchObject({ ok: stopped.sent, failed: 0 });
  });
});
