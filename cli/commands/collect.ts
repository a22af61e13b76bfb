/**
 * `tandem collect`: record the copies an edge proxy mirrors (recorder/collector.ts) until Ctrl-C, or, with
 * `--print-nginx-config`, print the nginx part that sends them (recorder/edge-config.ts) and stop.
 */
import { once } from 'node:events';
import { isIP } from 'node:net';
import { UsageError } from '../../core/index.js';
import { edgeSampling, isNginxQuotable, nginxMirrorConfig, startCollector, type StickyKey } from '../../recorder/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { parseListen, parseRate } from '../arguments.js';
import { assertTier, openRecorder, recordedSummary } from '../recorder-setup.js';

export interface CollectOptions extends GlobalOptions {
  readonly tier?: string;
  readonly listen: string;
  readonly rate?: string;
  readonly admin?: string;
  readonly trust?: string;
  readonly stickyHeader?: string;
  readonly printNginxConfig?: boolean;
  readonly upstream?: string;
  readonly edgeListen?: string;
  readonly grpc?: boolean;
}

/** The shared token comes from the environment, never a flag: a command line is readable by every user of the host. */
export const TOKEN_VARIABLE = 'TANDEM_COLLECT_TOKEN';

function tokenOf(ctx: CliContext): string | undefined {
  const token = ctx.env[TOKEN_VARIABLE];
  if (token === undefined || token === '') return undefined;
  // It is written into nginx's configuration (--print-nginx-config): only what nginx takes as a quoted string.
  if (token.length < 16 || !isNginxQuotable(token))
    throw new UsageError(`${TOKEN_VARIABLE} must be at least 16 printable characters without quotes, backslashes, $, ; or braces`);
  return token;
}

function trustedAddresses(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const addresses = text.split(',').map((a) => a.trim());
  for (const address of addresses)
    if (isIP(address) === 0) throw new UsageError(`--trust must be a comma-separated list of IP addresses, got ${JSON.stringify(address)}`);
  return addresses;
}

export async function run(options: CollectOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx);
  const listen = parseListen(options.listen, '--listen');
  const rate = options.rate !== undefined ? parseRate(options.rate, '--rate') : config.recorder.rate;
  const stickyHeader = options.stickyHeader ?? config.recorder.stickyKey?.header;
  const token = tokenOf(ctx);
  if (options.printNginxConfig) {
    if (options.upstream === undefined) throw new UsageError('--print-nginx-config needs --upstream HOST:PORT (the service nginx passes requests to)');
    try {
      ctx.out(
        nginxMirrorConfig({
          listen: parseListen(options.edgeListen ?? '8080', '--edge-listen'),
          upstream: parseListen(options.upstream.replace(/^(?:http|grpc):\/\//, ''), '--upstream'),
          collector: listen,
          rate,
          ...(stickyHeader !== undefined ? { stickyHeader } : {}),
          ...(token !== undefined ? { token } : {}),
          ...(options.grpc ? { grpc: true } : {}),
        }),
      );
    } catch (error) {
      throw error instanceof UsageError ? error : new UsageError((error as Error).message);
    }
    return ExitCode.ok;
  }
  if (options.tier === undefined) throw new UsageError('collect needs --tier (or --print-nginx-config)');
  assertTier(options.tier);
  const admin = parseListen(options.admin ?? `${listen.host}:0`, '--admin');
  const trusted = trustedAddresses(options.trust);
  const { edgeRate, collectorRate } = edgeSampling(rate);
  const stickyKey: StickyKey | undefined = stickyHeader !== undefined ? { header: stickyHeader } : undefined;
  const { store, recorder } = await openRecorder(config, ctx, {
    tier: options.tier,
    rate: collectorRate,
    mirroredAtRate: edgeRate,
    ...(stickyKey ? { stickyKey } : {}),
  });
  let collector;
  try {
    collector = await startCollector({
      recorder,
      host: listen.host,
      port: listen.port,
      adminHost: admin.host,
      adminPort: admin.port,
      ...(trusted ? { trustedAddresses: trusted } : {}),
      ...(token !== undefined ? { token } : {}),
    });
  } catch (error) {
    // startCollector closed the recorder; the store must not keep the process alive either.
    await store.close();
    throw error;
  }
  const trust = token !== undefined ? `copies carrying ${TOKEN_VARIABLE}` : `copies from ${(trusted ?? ['127.0.0.1', '::1']).join(', ')}`;
  ctx.out(
    options.json
      ? JSON.stringify({ tier: options.tier, url: collector.url, adminUrl: collector.adminUrl, rate, edgeRate, collectorRate })
      : `collecting tier ${options.tier} at rate ${rate} (the edge mirrors ${edgeRate}, this records ${collectorRate.toPrecision(3)} of that) from ${trust}: ${collector.url} (metrics: ${collector.adminUrl}/metrics); Ctrl-C stops`,
  );
  if (ctx.signal && !ctx.signal.aborted) await once(ctx.signal, 'abort');
  await collector.close();
  await store.close();
  ctx.err(recordedSummary(recorder, options.tier));
  return ExitCode.ok;
}
