/**
 * `tandem record`: run the recording sidecar in front of a service until
 * Ctrl-C, sampling requests into the configured store.
 */
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import { UsageError } from '../../core/index.js';
import type { TlsIdentity } from '../../net/index.js';
import { startSidecar, type StickyKey } from '../../recorder/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { parseListen, parseRate } from '../arguments.js';
import { assertTier, openRecorder, recordedSummary } from '../recorder-setup.js';

export interface RecordOptions extends GlobalOptions {
  readonly tier: string;
  readonly listen: string;
  readonly upstream: string;
  readonly rate?: string;
  readonly stickyHeader?: string;
  readonly stickyQuery?: string;
  readonly admin?: string;
  readonly tlsCert?: string;
  readonly tlsKey?: string;
}

/** The TLS identity the sidecar serves, read from the files named; a missing or unreadable one is bad input. */
async function tlsIdentity(options: RecordOptions, cwd: string): Promise<TlsIdentity | undefined> {
  if (options.tlsCert === undefined && options.tlsKey === undefined) return undefined;
  if (options.tlsCert === undefined || options.tlsKey === undefined) throw new UsageError('give both --tls-cert and --tls-key, or neither');
  const read = async (flag: string, file: string): Promise<Buffer> => {
    try {
      const bytes = await readFile(resolve(cwd, file));
      if (!bytes.toString('latin1').includes('-----BEGIN ')) throw new Error('not a PEM file');
      return bytes;
    } catch (error) {
      throw new UsageError(`${flag} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  const identity = { cert: await read('--tls-cert', options.tlsCert), key: await read('--tls-key', options.tlsKey) };
  try {
    createSecureContext(identity);
  } catch (error) {
    throw new UsageError(`--tls-cert and --tls-key do not make a TLS identity: ${(error as Error).message}`);
  }
  return identity;
}

export async function run(options: RecordOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx);
  assertTier(options.tier);
  let upstream: URL;
  try {
    upstream = new URL(options.upstream);
  } catch {
    throw new UsageError(`--upstream must be an http:// URL, got ${JSON.stringify(options.upstream)}`);
  }
  if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:')
    throw new UsageError(`--upstream must be an http:// or https:// URL, got ${JSON.stringify(options.upstream)}`);
  // Each of these would be dropped without a word: the sidecar forwards the client's own path, query and credentials.
  if (upstream.username !== '' || upstream.password !== '')
    throw new UsageError("--upstream must not carry credentials (user:password@): the sidecar forwards each client's own Authorization header");
  if (upstream.search !== '' || options.upstream.includes('?'))
    throw new UsageError(
      `--upstream must not have a query: each request's own query is forwarded as the client sent it, got ${JSON.stringify(options.upstream)}`,
    );
  if (upstream.hash !== '' || options.upstream.includes('#'))
    throw new UsageError(`--upstream must not have a fragment (#…): it is never sent to a server, got ${JSON.stringify(options.upstream)}`);
  const listen = parseListen(options.listen, '--listen');
  const admin = parseListen(options.admin ?? `${listen.host}:0`, '--admin');
  const rate = options.rate !== undefined ? parseRate(options.rate, '--rate') : config.recorder.rate;
  const tls = await tlsIdentity(options, ctx.cwd);
  if (options.stickyHeader !== undefined && options.stickyQuery !== undefined) throw new UsageError('give at most one of --sticky-header and --sticky-query');
  const stickyKey: StickyKey | undefined =
    options.stickyHeader !== undefined
      ? { header: options.stickyHeader }
      : options.stickyQuery !== undefined
        ? { query: options.stickyQuery }
        : config.recorder.stickyKey?.header !== undefined
          ? { header: config.recorder.stickyKey.header }
          : config.recorder.stickyKey?.query !== undefined
            ? { query: config.recorder.stickyKey.query }
            : undefined;
  const { store, recorder } = await openRecorder(config, ctx, { tier: options.tier, rate, ...(stickyKey ? { stickyKey } : {}) });
  let sidecar;
  try {
    sidecar = await startSidecar({
      recorder,
      upstream: upstream.href,
      host: listen.host,
      port: listen.port,
      adminHost: admin.host,
      adminPort: admin.port,
      ...(tls ? { tls } : {}),
    });
  } catch (error) {
    // startSidecar closed the recorder; the store must not keep the process alive either.
    await store.close();
    throw error;
  }
  ctx.out(
    options.json
      ? JSON.stringify({ tier: options.tier, url: sidecar.url, adminUrl: sidecar.adminUrl, upstream: upstream.href, rate })
      : `recording tier ${options.tier} at rate ${rate}: ${sidecar.url} → ${upstream.href} (metrics: ${sidecar.adminUrl}/metrics); Ctrl-C stops`,
  );
  if (ctx.signal && !ctx.signal.aborted) await once(ctx.signal, 'abort');
  await sidecar.close();
  await store.close();
  ctx.err(recordedSummary(recorder, options.tier));
  return ExitCode.ok;
}
