/**
 * Paired gRPC replay for the gRPC benchmark, pinned to its own core:
 * `tandem CONTROL TREATMENT SECONDS`: Tandem's paired replay (open loop at a rate above what the arms can
 * take, so what it sustains is measured; pairs at the in-flight cap are dropped and not counted);
 * `minimal CONTROL TREATMENT SECONDS`: the baseline, a minimal paired loop of two @grpc/grpc-js clients on the
 * same corpus, 256 pairs in flight. Prints pairs per second.
 */
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { systemClock, type CorpusRecord } from '../../core/index.js';
import { frameMessage } from '../../net/index.js';
import { pairedReplay } from '../../replayer/index.js';
import { CATALOG_PROTO_FILE } from '../../examples/catalog/catalog-service.js';

const [mode, control, treatment, secondsText] = process.argv.slice(2);
const seconds = Number(secondsText);
const IN_FLIGHT = 256;
const ids = Array.from({ length: 500 }, (_, i) => `a${i}`);
const LookupRequest = protobuf.loadSync(CATALOG_PROTO_FILE).lookupType('tandem.test.LookupRequest');
const records: CorpusRecord[] = ids.map((id, i) => ({
  id: randomUUID(),
  tier: 'catalog',
  timeMs: Date.UTC(2026, 11, 1) + i,
  method: 'POST',
  path: '/tandem.test.Catalog/Lookup',
  headers: { 'content-type': 'application/grpc', 'x-client': 'bench' },
  body: frameMessage(LookupRequest.encode({ id }).finish()).toString('base64'),
  bodyTruncated: false,
  sampleRate: 1,
  sampleMode: 'uniform',
  grpc: {
    service: 'tandem.test.Catalog',
    method: 'Lookup',
    requestMessages: 1,
    responseMessages: [],
    responseTruncated: false,
    status: 0,
    statusMessage: '',
    trailers: {},
  },
}));

async function* cycled(): AsyncIterable<CorpusRecord> {
  for (let i = 0; i < 10_000_000; i++) yield records[i % records.length]!;
}

if (mode === 'tandem') {
  let errors = 0;
  const result = await pairedReplay({
    records: cycled(),
    arms: { control: control!, treatment: treatment! },
    ratePerSecond: 30_000,
    concurrency: IN_FLIGHT,
    timeoutMs: 10_000,
    warmupMs: 1_000,
    measureMs: seconds * 1000,
    seed: 1,
    identity: { experimentId: 'bench', trial: 0, attempt: 1, headerPrefix: 'x-tandem-', jobs: { control: 'c', treatment: 't' } },
    clock: systemClock,
    http2: { connections: 2, maxConcurrentStreams: 1_000 },
    onOutcome: (o) => {
      if (o.errorClass !== '') errors++;
    },
  });
  process.stdout.write(`${JSON.stringify({ mode, pairsPerSecond: result.achievedRate, errors })}\n`);
} else {
  type Client = grpc.Client & { Lookup(request: { id: string }, callback: (error: grpc.ServiceError | null) => void): void };
  const Catalog = (
    grpc.loadPackageDefinition(loadSync(CATALOG_PROTO_FILE, { keepCase: true })) as unknown as {
      tandem: { test: { Catalog: new (address: string, credentials: grpc.ChannelCredentials) => Client } };
    }
  ).tandem.test.Catalog;
  const clients = [
    new Catalog(new URL(control!).host, grpc.credentials.createInsecure()),
    new Catalog(new URL(treatment!).host, grpc.credentials.createInsecure()),
  ];
  let pairs = 0;
  let errors = 0;
  let measuring = false;
  const warmEnd = performance.now() + 1_000;
  const end = warmEnd + seconds * 1000;
  let next = 0;
  await new Promise<void>((resolve) => {
    let running = IN_FLIGHT;
    const loop = (): void => {
      const now = performance.now();
      if (now >= end) {
        if (--running === 0) resolve();
        return;
      }
      if (!measuring && now >= warmEnd) measuring = true;
      const id = ids[next++ % ids.length]!;
      let left = 2;
      const counted = measuring;
      const done = (error: grpc.ServiceError | null): void => {
        if (error) errors++;
        if (--left === 0) {
          if (counted) pairs++;
          loop();
        }
      };
      for (const client of clients) client.Lookup({ id }, done);
    };
    for (let i = 0; i < IN_FLIGHT; i++) loop();
  });
  for (const client of clients) client.close();
  process.stdout.write(`${JSON.stringify({ mode, pairsPerSecond: pairs / seconds, errors })}\n`);
}
process.exit(0);
