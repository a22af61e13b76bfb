/**
 * `node examples/catalog/run.mjs --port N --version v1|v2`: the catalog gRPC
 * service (cleartext HTTP/2), as a deploy command starts it; it answers
 * grpc.health.v1.Health/Check with SERVING once it listens.
 */
import { startCatalogService, type CatalogVersion } from './catalog-service.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const version = flag('version') ?? 'v1';
if (version !== 'v1' && version !== 'v2') throw new Error(`--version must be v1 or v2, got ${JSON.stringify(version.slice(0, 20))}`);
const port = Number(flag('port') ?? 0);
if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`--port must be a port number, got ${flag('port')}`);
const service = await startCatalogService(version as CatalogVersion, port);
process.stdout.write(`catalog ${version} listening on ${service.url}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void service.close().then(() => process.exit(0)));
