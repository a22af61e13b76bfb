/**
 * Child-process entry of one example service: prints `{"ready":true,"urls":[…]}`
 * once listening, and exits on SIGTERM, SIGINT or when its parent closes stdin
 * (so a parent that dies never leaves it behind).
 */
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { serviceConfigFromEnv, startService, type ServiceConfig } from './run-service.js';

/** With STACK_CONFIG=stdin the configuration arrives as one JSON line, so the parent can start this process before it knows every URL. */
async function readConfig(): Promise<ServiceConfig> {
  if (process.env.STACK_CONFIG !== 'stdin') return serviceConfigFromEnv(process.env);
  const lines = createInterface({ input: process.stdin });
  const [line] = (await once(lines, 'line')) as [string];
  lines.close();
  return JSON.parse(line) as ServiceConfig;
}

const service = process.argv[2] ?? '';
const running = await startService(service, await readConfig());
process.stdout.write(`${JSON.stringify({ ready: true, service, urls: running.urls, ...(running.grpcUrls ? { grpcUrls: running.grpcUrls } : {}) })}\n`);

let closing = false;
const shutdown = (): void => {
  if (closing) return;
  closing = true;
  running.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
process.stdin.on('end', shutdown);
process.stdin.on('error', shutdown);
process.stdin.resume();
