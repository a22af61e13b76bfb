/** The tests' gRPC service (protos/catalog.proto) on a real @grpc/grpc-js server on port 0, and a client for it. */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { randomUUID } from 'node:crypto';
import { type CorpusRecord } from '../../core/index.js';
import { frameMessage } from '../../net/index.js';
import { onTestFinished } from 'vitest';

export const CATALOG_PROTO = fileURLToPath(new URL('../../examples/catalog/catalog.proto', import.meta.url));

export interface Item {
  id: string;
  name: string;
  score: number;
  tags: string[];
}

export interface CatalogBehaviour {
  /** Changes every item's name: a field change the comparison must name. */
  readonly nameSuffix?: string;
  /** Ids answered with NOT_FOUND. */
  readonly missing?: readonly string[];
  /** Trailing metadata added to every answer. */
  readonly trailer?: Readonly<Record<string, string>>;
  /** Lookups of these ids answer only after this long (a deadline test). */
  readonly slow?: { readonly ids: readonly string[]; readonly delayMs: number };
  /** Called with each call's metadata (a test reads what reached the service). */
  readonly onCall?: (method: string, metadata: grpc.Metadata) => void;
}

type Loaded = any;

const definition = (): Loaded => grpc.loadPackageDefinition(loadSync(CATALOG_PROTO, { keepCase: true, defaults: true })) as Loaded;

export function itemFor(id: string, behaviour: CatalogBehaviour = {}): Item {
  return { id, name: `item ${id}${behaviour.nameSuffix ?? ''}`, score: id.length / 10, tags: ['a', id] };
}

/** Starts the service; resolves to its `host:port`. */
export async function startCatalog(behaviour: CatalogBehaviour = {}): Promise<string> {
  const server = new grpc.Server();
  const trailer = (): grpc.Metadata => {
    const metadata = new grpc.Metadata();
    for (const [k, v] of Object.entries(behaviour.trailer ?? {})) metadata.set(k, v);
    return metadata;
  };
  server.addService(definition().tandem.test.Catalog.service, {
    Lookup(call: grpc.ServerUnaryCall<{ id: string }, Item>, callback: grpc.sendUnaryData<Item>) {
      behaviour.onCall?.('Lookup', call.metadata);
      if (behaviour.slow?.ids.includes(call.request.id)) {
        const timer = setTimeout(() => callback(null, itemFor(call.request.id, behaviour), trailer()), behaviour.slow.delayMs);
        call.on('cancelled', () => clearTimeout(timer));
        return;
      }
      if (behaviour.missing?.includes(call.request.id))
        return callback({ code: grpc.status.NOT_FOUND, details: `no item ${call.request.id}`, metadata: trailer() });
      callback(null, itemFor(call.request.id, behaviour), trailer());
    },
    List(call: grpc.ServerWritableStream<{ count: number }, Item>) {
      behaviour.onCall?.('List', call.metadata);
      for (let i = 0; i < call.request.count; i++) call.write(itemFor(String(i), behaviour));
      call.end(trailer());
    },
    Update(call: grpc.ServerUnaryCall<Item, Item>, callback: grpc.sendUnaryData<Item>) {
      behaviour.onCall?.('Update', call.metadata);
      callback(null, call.request, trailer());
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  onTestFinished(() => new Promise<void>((resolve) => server.tryShutdown(() => resolve())));
  return `127.0.0.1:${port}`;
}

export interface CatalogClient {
  lookup(id: string, metadata?: Record<string, string | Buffer>): Promise<{ item?: Item; error?: grpc.ServiceError; trailers: Record<string, unknown> }>;
  list(count: number): Promise<{ items: Item[]; status: number; trailers: Record<string, unknown> }>;
  update(item: Item): Promise<{ item?: Item; error?: grpc.ServiceError }>;
  close(): void;
}

export function catalogClient(
  address: string,
  channelOptions: grpc.ChannelOptions = {},
  credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
): CatalogClient {
  const Catalog = definition().tandem.test.Catalog;
  const client = new Catalog(address, credentials, channelOptions);
  onTestFinished(() => client.close());
  const metadataOf = (values: Record<string, string | Buffer> = {}): grpc.Metadata => {
    const metadata = new grpc.Metadata();
    for (const [k, v] of Object.entries(values)) metadata.set(k, v);
    return metadata;
  };
  return {
    lookup: (id, values) =>
      new Promise((resolve) => {
        // The answer and the status arrive as two events: resolve once both have.
        let answer: { item?: Item; error?: grpc.ServiceError } | undefined;
        let trailers: Record<string, unknown> | undefined;
        const settle = (): void => {
          if (answer !== undefined && trailers !== undefined) resolve({ ...answer, trailers });
        };
        const call = client.Lookup({ id }, metadataOf(values), (error: grpc.ServiceError | null, item: Item) => {
          answer = error ? { error } : { item };
          settle();
        });
        call.on('status', (status: grpc.StatusObject) => {
          trailers = status.metadata.getMap();
          settle();
        });
      }),
    list: (count) =>
      new Promise((resolve) => {
        const items: Item[] = [];
        const call = client.List({ count });
        call.on('data', (item: Item) => items.push(item));
        call.on('error', () => undefined);
        call.on('status', (status: grpc.StatusObject) => resolve({ items, status: status.code, trailers: status.metadata.getMap() }));
      }),
    update: (item) => new Promise((resolve) => client.Update(item, (error: grpc.ServiceError | null, out: Item) => resolve(error ? { error } : { item: out }))),
    close: () => client.close(),
  };
}

const catalogRoot = protobuf.loadSync(CATALOG_PROTO);

/** A recorded gRPC call of the catalog, as the sidecar would store it. */
export function catalogRecord(
  method: 'Lookup' | 'List' | 'Update',
  request: Record<string, unknown>,
  options: { timeMs?: number; headers?: Record<string, string> } = {},
): CorpusRecord {
  const type = catalogRoot.lookupType(method === 'Lookup' ? 'tandem.test.LookupRequest' : method === 'List' ? 'tandem.test.ListRequest' : 'tandem.test.Item');
  return {
    id: randomUUID(),
    tier: 'catalog',
    timeMs: options.timeMs ?? Date.UTC(2026, 11, 1),
    method: 'POST',
    path: `/tandem.test.Catalog/${method}`,
    headers: { 'content-type': 'application/grpc', ...options.headers },
    body: frameMessage(type.encode(type.fromObject(request)).finish()).toString('base64'),
    bodyTruncated: false,
    sampleRate: 1,
    sampleMode: 'uniform',
    grpc: {
      service: 'tandem.test.Catalog',
      method,
      requestMessages: 1,
      responseMessages: [],
      responseTruncated: false,
      status: 0,
      statusMessage: '',
      trailers: {},
    },
  };
}
