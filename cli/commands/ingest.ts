/**
 * `tandem ingest [--listen 127.0.0.1:7400]`: the HTTP ingest endpoint of the
 * config consumption index (POST /config-reads) until SIGINT/SIGTERM. The
 * bearer token comes from the environment variable named by --token-env
 * (default TANDEM_INGEST_TOKEN), never from the command line.
 */
import { systemClock } from '../../core/index.js';
import { createStore } from '../../store/index.js';
import { startIngestServer } from '../../triggers/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { parseListen } from '../arguments.js';

export interface IngestOptions extends GlobalOptions {
  readonly listen?: string;
  readonly tokenEnv?: string;
}

export async function run(options: IngestOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx);
  const { host, port } = parseListen(options.listen ?? '127.0.0.1:7400', '--listen');
  const token = ctx.env[options.tokenEnv ?? 'TANDEM_INGEST_TOKEN'] || undefined;
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  await store.init();
  let server;
  try {
    server = await startIngestServer({ host, port, token, sink: (reads) => store.configReads.append(reads), clock: systemClock });
  } catch (error) {
    await store.close();
    throw error;
  }
  ctx.out(JSON.stringify({ ingest: 'ready', url: server.url, token: token !== undefined }));
  await new Promise<void>((resolve) => {
    if (ctx.signal?.aborted) resolve();
    ctx.signal?.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.close();
  await store.close();
  return ExitCode.ok;
}
