/**
 * Process entry of one example service: `service-main <service> [--faults=LIST]`, configured from the
 * environment (PORT, FEATURES_URL, …; serviceConfigFromEnv) or, with STACK_CONFIG=stdin, from one JSON line
 * its parent writes once it knows every URL. Prints `{"ready":true,"urls":[…]}` once listening and exits on
 * SIGTERM or SIGINT, and, when its parent configures it over stdin, when that parent closes stdin (so a parent
 * that dies never leaves it behind).
 *
 * The compiled build bundles this entry with everything it imports into one file (bin/compiled-build.js), and
 * the demo's arms run it directly: a fresh process is ready in about half the time `tandem example-stack
 * --service` takes, and every trial starts two.
 */
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { isBadInput } from '../../core/errors.js';
import { serviceArguments, serviceConfigFromEnv, startService, type ServiceConfig } from './run-service.js';

async function readConfig(fromStdin: boolean): Promise<ServiceConfig> {
  if (!fromStdin) return serviceConfigFromEnv(process.env);
  const lines = createInterface({ input: process.stdin });
  const [line] = (await once(lines, 'line')) as [string];
  lines.close();
  return JSON.parse(line) as ServiceConfig;
}

async function main(): Promise<void> {
  const { service, faults } = serviceArguments(process.argv.slice(2));
  const fromStdin = process.env.STACK_CONFIG === 'stdin';
  const config = await readConfig(fromStdin);
  const running = await startService(service, { ...config, ...(faults !== undefined ? { faults } : {}) });
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
  if (fromStdin) {
    process.stdin.on('end', shutdown);
    process.stdin.on('error', shutdown);
    process.stdin.resume();
  }
}

// Bad arguments or configuration exit 3 (as the CLI's bad input does), naming what was wrong; anything else 1.
main().catch((error: unknown) => {
  process.stderr.write(`example service: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(isBadInput(error) ? 3 : 1);
});
