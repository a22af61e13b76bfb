/** The example catalog gRPC service (examples/catalog) in its own process, for the gRPC benchmark. Prints its URL and pid. */
import { startCatalogService, type CatalogVersion } from '../../examples/catalog/catalog-service.js';

const service = await startCatalogService((process.argv[2] ?? 'v1') as CatalogVersion);
process.stdout.write(`${JSON.stringify({ url: service.url, address: service.address, pid: process.pid })}\n`);
const stop = (): void => void service.close().then(() => process.exit(0));
process.stdin.resume();
process.stdin.on('end', stop);
process.on('SIGINT', stop);
