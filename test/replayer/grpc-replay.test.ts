/**
 * Paired replay of gRPC records over HTTP/2 into two real @grpc/grpc-js
 * servers: every call reaches both arms with its metadata and the trial's
 * identity, statuses decide error classes, a call's own `grpc-timeout` is its
 * deadline, and response messages are kept for comparison.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import type * as grpc from '@grpc/grpc-js';
import { systemClock, type CorpusRecord, type RequestOutcome } from '../../core/index.js';
import { splitMessages } from '../../net/index.js';
import { pairedReplay } from '../../replayer/index.js';
import { stream } from '../support/corpus.js';
import { catalogRecord, startCatalog } from '../support/grpc-service.js';

describe('paired replay of gRPC records', () => {
  it('sends each call to both arms over HTTP/2 and reports statuses, deadlines and messages', async () => {
    const seen: Record<string, grpc.Metadata[]> = { control: [], treatment: [] };
    const control = await startCatalog({ missing: ['gone'], slow: { ids: ['slow'], delayMs: 5_000 }, onCall: (_m, md) => seen.control!.push(md) });
    const treatment = await startCatalog({
      missing: ['gone'],
      slow: { ids: ['slow'], delayMs: 5_000 },
      nameSuffix: ' v2',
      onCall: (_m, md) => seen.treatment!.push(md),
    });
    const records: CorpusRecord[] = [
      ...Array.from({ length: 10 }, (_, i) => catalogRecord('Lookup', { id: `k${i}` }, { headers: { 'x-request-id': `r${i}` } })),
      catalogRecord('Lookup', { id: 'gone' }),
      catalogRecord('Lookup', { id: 'slow' }, { headers: { 'grpc-timeout': '200m' } }),
      catalogRecord('List', { count: 3 }),
    ];
    const outcomes: RequestOutcome[] = [];
    const result = await pairedReplay({
      records: stream(records),
      arms: { control: `http://${control}`, treatment: `http://${treatment}` },
      ratePerSecond: 100,
      concurrency: 64,
      timeoutMs: 4_000,
      warmupMs: 0,
      measureMs: 10_000,
      seed: 7,
      identity: { experimentId: 'exp-g', trial: 2, attempt: 1, headerPrefix: 'x-tandem-', jobs: { control: 'exp-g.control', treatment: 'exp-g.treatment' } },
      clock: systemClock,
      keepBodyBytes: 65_536,
      http2: { connections: 2, maxConcurrentStreams: 50 },
      onOutcome: (o) => outcomes.push(o),
    });
    expect(result.sentPairs).toBe(records.length);
    expect(outcomes).toHaveLength(2 * records.length);
    const of = (arm: string, record: CorpusRecord) => outcomes.find((o) => o.arm === arm && o.recordId === record.id)!;
    for (const arm of ['control', 'treatment']) {
      const ok = of(arm, records[0]!);
      expect(ok).toMatchObject({ status: 200, grpcStatus: 0, errorClass: '' });
      expect(ok.response?.grpc).toEqual({ status: 0, statusMessage: 'OK', messages: 1 });
      expect(splitMessages(Buffer.from(ok.body!, 'base64')).messages).toHaveLength(1);
      expect(of(arm, records[10]!)).toMatchObject({ grpcStatus: 5, errorClass: 'grpc' });
      // The call's own deadline (200 ms), not the replay's 4 s.
      const slow = of(arm, records[11]!);
      expect(slow.errorClass).toBe('timeout');
      expect(slow.latencyMs).toBeLessThan(3_000);
      expect(of(arm, records[12]!).response?.grpc?.messages).toBe(3);
    }
    // Same request, different answers: the treatment's names changed, so the hashes differ; the statuses agree.
    expect(of('control', records[0]!).response!.contentHash).not.toBe(of('treatment', records[0]!).response!.contentHash);
    // Each arm got the recorded metadata and its own identity.
    const first = seen.treatment!.find((md) => md.get('x-request-id')[0] === 'r0')!;
    expect(first.get('x-tandem-experiment')).toEqual(['exp-g']);
    expect(first.get('x-tandem-arm')).toEqual(['treatment']);
    expect(first.get('x-tandem-trial')).toEqual(['2']);
    expect(seen.control!.every((md) => md.get('x-tandem-arm')[0] === 'control')).toBe(true);
    expect(result.errors.control).toMatchObject({ grpc: 1, timeout: 1 });
  });

  it('counts an arm that does not answer as refused, per call', async () => {
    const outcomes: RequestOutcome[] = [];
    const live = await startCatalog();
    await pairedReplay({
      records: stream([catalogRecord('Lookup', { id: 'a' }), catalogRecord('Lookup', { id: 'b' })]),
      arms: { control: `http://${live}`, treatment: 'http://127.0.0.1:1' },
      ratePerSecond: 50,
      concurrency: 8,
      timeoutMs: 2_000,
      warmupMs: 0,
      measureMs: 1_000,
      seed: 1,
      identity: { experimentId: 'exp-r', trial: 0, attempt: 1, headerPrefix: 'x-tandem-', jobs: { control: 'c', treatment: 't' } },
      clock: systemClock,
      onOutcome: (o) => outcomes.push(o),
    });
    expect(outcomes.filter((o) => o.arm === 'treatment').map((o) => o.errorClass)).toEqual(['refused', 'refused']);
    expect(outcomes.filter((o) => o.arm === 'control').map((o) => o.grpcStatus)).toEqual([0, 0]);
  });

  it('counts an arm that speaks only HTTP/1.1 as failing each call, and goes on', async () => {
    const { createServer } = await import('node:http');
    const http1 = createServer((_req, res) => res.end('HTTP/1.1 only'));
    await new Promise<void>((resolve) => http1.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => http1.close(() => resolve())));
    const live = await startCatalog();
    const outcomes: RequestOutcome[] = [];
    const result = await pairedReplay({
      records: stream([catalogRecord('Lookup', { id: 'a' }), catalogRecord('Lookup', { id: 'b' })]),
      arms: { control: `http://${live}`, treatment: `http://127.0.0.1:${(http1.address() as { port: number }).port}` },
      ratePerSecond: 50,
      concurrency: 8,
      timeoutMs: 2_000,
      warmupMs: 0,
      measureMs: 1_000,
      seed: 1,
      identity: { experimentId: 'exp-h1', trial: 0, attempt: 1, headerPrefix: 'x-tandem-', jobs: { control: 'c', treatment: 't' } },
      clock: systemClock,
      onOutcome: (o) => outcomes.push(o),
    });
    expect(result.sentPairs).toBe(2);
    const treatment = outcomes.filter((o) => o.arm === 'treatment');
    expect(treatment).toHaveLength(2);
    for (const o of treatment) expect(['reset', 'refused']).toContain(o.errorClass);
    expect(outcomes.filter((o) => o.arm === 'control').map((o) => o.errorClass)).toEqual(['', '']);
  });
});
