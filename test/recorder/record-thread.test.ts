/**
 * Issue 69, finding 1: a sampled gRPC answer's messages were decompressed on the sidecar's event loop, and one answer
 * of 40,000 gzip messages held every other connection for 0.4–0.9 s. Records are now built in a worker thread: the
 * request path only copies bytes and queues them (`npm run bench -- recorder-h2` measures the stall).
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { systemClock, type CorpusRecord } from '../../core/index.js';
import { MAX_KEPT_RESPONSE_MESSAGES, Recorder } from '../../recorder/index.js';
import type { CorpusStore } from '../../store/index.js';

function memoryCorpus(): { corpus: CorpusStore; stored: CorpusRecord[] } {
  const stored: CorpusRecord[] = [];
  const corpus = { append: async (batch: readonly CorpusRecord[]) => void stored.push(...batch) } as unknown as CorpusStore;
  return { corpus, stored };
}

/** gRPC length-prefixed messages, each gzip-flagged. */
function gzipMessages(payloads: readonly Buffer[]): Buffer {
  return Buffer.concat(
    payloads.map((payload) => {
      const compressed = gzipSync(payload);
      const prefix = Buffer.alloc(5);
      prefix[0] = 1;
      prefix.writeUInt32BE(compressed.length, 1);
      return Buffer.concat([prefix, compressed]);
    }),
  );
}

describe('the recorder builds records off the event loop', () => {
  it('queues a sampled exchange without building it on the caller, then stores it whole, secrets redacted and gzip messages undone', async () => {
    const { corpus, stored } = memoryCorpus();
    const recorder = new Recorder({ tier: 'grpc', store: corpus, clock: systemClock, rate: 1, log: () => undefined });
    const payloads = Array.from({ length: 900 }, (_, i) => Buffer.from(`answer ${i}`));
    recorder.record({
      timeMs: 1,
      method: 'POST',
      url: '/catalog.Catalog/List',
      headers: { 'content-type': 'application/grpc', authorization: 'Bearer SECRET' },
      body: Buffer.from([0, 0, 0, 0, 0]),
      truncated: false,
      grpcCopy: {
        service: 'catalog.Catalog',
        method: 'List',
        responseHeaders: { 'content-type': 'application/grpc', 'grpc-encoding': 'gzip' },
        trailers: { 'grpc-status': '0' },
        responseBody: gzipMessages(payloads),
        complete: true,
      },
    });
    // Nothing was built on this thread: the record waits in the build queue, not in the writer's buffer.
    expect({ writer: recorder.writer.buffered, waiting: recorder.accounting.buffered }).toEqual({ writer: 0, waiting: 1 });
    await recorder.flush();
    expect(stored).toHaveLength(1);
    const [record] = stored;
    expect(record!.headers.authorization).toBe('[redacted]');
    expect(record!.grpc).toMatchObject({ service: 'catalog.Catalog', method: 'List', requestMessages: 1, responseTruncated: false, status: 0 });
    expect(record!.grpc!.responseMessages.map((m) => Buffer.from(m, 'base64').toString())).toEqual(payloads.map(String));
    expect(recorder.accounting).toMatchObject({ sampled: 1, written: 1, dropped: 0, buffered: 0 });
    await recorder.close();
  });

  it('keeps at most a thousand response messages of a call, marked truncated', async () => {
    const { corpus, stored } = memoryCorpus();
    const recorder = new Recorder({ tier: 'grpc', store: corpus, clock: systemClock, rate: 1, log: () => undefined });
    const payloads = Array.from({ length: 40_000 }, () => Buffer.from('a'));
    recorder.record({
      timeMs: 1,
      method: 'POST',
      url: '/s.S/M',
      headers: {},
      body: Buffer.alloc(0),
      truncated: false,
      grpcCopy: {
        service: 's.S',
        method: 'M',
        responseHeaders: { 'grpc-encoding': 'gzip' },
        trailers: { 'grpc-status': '0' },
        responseBody: gzipMessages(payloads),
        complete: true,
      },
    });
    await recorder.flush();
    expect(stored[0]!.grpc).toMatchObject({ responseTruncated: true, status: 0 });
    expect(stored[0]!.grpc!.responseMessages).toHaveLength(MAX_KEPT_RESPONSE_MESSAGES);
    await recorder.close();
  });

  it('drops and counts what finds the build queue full, sheds, and keeps the accounting exact', async () => {
    const { corpus, stored } = memoryCorpus();
    const log: string[] = [];
    const recorder = new Recorder({
      tier: 'q',
      store: corpus,
      clock: systemClock,
      rate: 1,
      log: (line) => log.push(line),
      buildQueueRecords: 2,
      buildQueueBytes: 1_000,
    });
    const exchange = (bytes: number) => ({ timeMs: 1, method: 'POST', url: '/x', headers: {}, body: Buffer.alloc(bytes, 0x61), truncated: false });
    recorder.record(exchange(10));
    // Over the byte budget with the first still queued: dropped, and the sampler sheds.
    recorder.record(exchange(995));
    recorder.record(exchange(10));
    // Over the count.
    recorder.record(exchange(10));
    expect(recorder.writer.dropped['queue-full']).toBe(2);
    expect(log.some((line) => line.includes('shedding'))).toBe(true);
    await recorder.flush();
    expect(stored).toHaveLength(2);
    expect(recorder.accounting).toMatchObject({ sampled: 4, written: 2, dropped: 2, buffered: 0 });
    await recorder.close();
  });

  it('builds on close what a starved worker never reached, rather than losing it', async () => {
    // A busy machine: the lowest-priority worker thread had not answered when the recorder's close timeout ran out,
    // and the sampled records it held were dropped. A close timeout of 0 closes before the worker has even started.
    const { corpus, stored } = memoryCorpus();
    const recorder = new Recorder({ tier: 'q', store: corpus, clock: systemClock, rate: 1, log: () => undefined, closeTimeoutMs: 0 });
    for (let i = 0; i < 3; i++) {
      recorder.record({ timeMs: i, method: 'POST', url: `/x/${i}`, headers: { authorization: 'Bearer SECRET' }, body: Buffer.from(`b${i}`), truncated: false });
    }
    await recorder.close();
    expect(stored.map((record) => [record.path, record.headers.authorization])).toEqual([
      ['/x/0', '[redacted]'],
      ['/x/1', '[redacted]'],
      ['/x/2', '[redacted]'],
    ]);
    expect(recorder.accounting).toMatchObject({ sampled: 3, written: 3, dropped: 0, buffered: 0 });
  });
});
