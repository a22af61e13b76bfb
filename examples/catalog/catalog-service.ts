/**
 * A small gRPC service for the gRPC tutorial (docs/grpc.md): a product
 * catalog on a real @grpc/grpc-js server, with the standard health and
 * server reflection services.
 * Version v2 is an upgrade with a visible change in one method: `Lookup`
 * answers names in upper case, and ids it does not stock (`z…`) with
 * NOT_FOUND; `List` and `Update` are unchanged.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';

export const CATALOG_PROTO_FILE = fileURLToPath(new URL('./catalog.proto', import.meta.url));
const HEALTH_PROTO_FILE = fileURLToPath(new URL('./health.proto', import.meta.url));

export type CatalogVersion = 'v1' | 'v2';

export interface CatalogItem {
  id: string;
  name: string;
  score: number;
  tags: string[];
}

export interface CatalogService {
  /** `host:port`, for gRPC clients. */
  readonly address: string;
  /** `http://host:port`, for Tandem. */
  readonly url: string;
  close(): Promise<void>;
}

export function catalogItem(id: string, version: CatalogVersion): CatalogItem {
  const name = `item ${id}`;
  return { id, name: version === 'v2' ? name.toUpperCase() : name, score: Math.round((id.length * 7) % 10) / 10, tags: ['catalog', id.slice(0, 1)] };
}

// grpc-js's loaded definitions are untyped objects.
type Definition = Record<string, Record<string, Record<string, Record<string, { service: grpc.ServiceDefinition }>>>>;

export async function startCatalogService(version: CatalogVersion, port = 0, host = '127.0.0.1'): Promise<CatalogService> {
  const definition = loadSync([CATALOG_PROTO_FILE, HEALTH_PROTO_FILE], { keepCase: true, defaults: true, enums: String });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as Definition;
  const server = new grpc.Server();
  // Server reflection: Tandem reads the service's descriptors from it when a workload names none.
  new ReflectionService(definition).addToServer(server);
  const stocked = (id: string): boolean => version === 'v1' || !id.startsWith('z');
  server.addService((loaded.tandem!.test! as unknown as Record<string, { service: grpc.ServiceDefinition }>).Catalog!.service, {
    Lookup(call: grpc.ServerUnaryCall<{ id: string }, CatalogItem>, callback: grpc.sendUnaryData<CatalogItem>) {
      if (!stocked(call.request.id)) return callback({ code: grpc.status.NOT_FOUND, details: `item ${call.request.id} is not stocked` });
      callback(null, catalogItem(call.request.id, version));
    },
    List(call: grpc.ServerWritableStream<{ count: number }, CatalogItem>) {
      const count = Math.max(0, Math.min(100, call.request.count));
      for (let i = 0; i < count; i++) call.write(catalogItem(`p${i}`, 'v1'));
      call.end();
    },
    Update(call: grpc.ServerUnaryCall<CatalogItem, CatalogItem>, callback: grpc.sendUnaryData<CatalogItem>) {
      callback(null, call.request);
    },
  });
  const health = loaded.grpc!.health!.v1!.Health!.service;
  server.addService(health, {
    Check(_call: grpc.ServerUnaryCall<{ service: string }, { status: string }>, callback: grpc.sendUnaryData<{ status: string }>) {
      callback(null, { status: 'SERVING' });
    },
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (error, p) => (error ? reject(error) : resolve(p))),
  );
  const address = `${host}:${bound}`;
  return {
    address,
    url: `http://${address}`,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
