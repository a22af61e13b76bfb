/**
 * `tandem serve [--listen 127.0.0.1:8700] [--token-env VAR]`: the dashboard
 * (dashboard/) over the configured store. This command composes what the
 * dashboard reads and does: the store, the report `tandem report` would
 * build, and, with a token, the queue for cancelling and calibrating.
 */
import { UsageError } from '../../core/index.js';
import { createStore } from '../../store/index.js';
import { evaluateExperiment, loadChecksModule, loadGrpcSchema } from '../../harness/index.js';
import { latestCalibration, parseRequest, type ExperimentQueue } from '../../executor/index.js';
import { ALLOWED_HOST, startDashboard } from '../../dashboard/server.js';
import type { DashboardActions } from '../../dashboard/context.js';
import { systemClock } from '../../core/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { parseListen } from '../arguments.js';
import { queueFor } from '../experiment-options.js';
import { workloadFor } from './report.js';

export interface ServeOptions extends GlobalOptions {
  readonly listen?: string;
  readonly tokenEnv?: string;
  readonly allowedHost?: readonly string[];
}

function allowedHostsFrom(options: ServeOptions): string[] {
  return (options.allowedHost ?? []).map((name) => {
    if (!ALLOWED_HOST.test(name))
      throw new UsageError(
        `--allowed-host must be a host name or a bracketed IPv6 address, optionally with :PORT (no scheme, no path), got ${JSON.stringify(name.slice(0, 100))}`,
      );
    return name.toLowerCase();
  });
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** Shorter tokens are guessable; `openssl rand -hex 16` gives 32 characters. */
const MIN_TOKEN_LENGTH = 16;

const CANCEL_WORDS = {
  removed: 'removed from the queue',
  signalled: 'cancel sent to its runner',
  finished: 'had already finished',
  'orphan-cancelled': 'cancelled (its runner had died)',
  'runner-silent': 'cancel recorded, but its runner stopped renewing its lease (most likely dead): cancel again once the lease lapses, within a minute',
} as const;

function tokenFrom(options: ServeOptions, env: NodeJS.ProcessEnv): string | undefined {
  if (options.tokenEnv === undefined) return undefined;
  if (!ENV_NAME.test(options.tokenEnv))
    throw new UsageError(`--token-env must name an environment variable (letters, digits, _), got ${JSON.stringify(options.tokenEnv)}`);
  const token = env[options.tokenEnv];
  if (token === undefined || token === '')
    throw new UsageError(
      `--token-env names ${options.tokenEnv}, which is not set (export a random token there, e.g. ${options.tokenEnv}=$(openssl rand -hex 16))`,
    );
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (token.length < MIN_TOKEN_LENGTH || /[\s\u0000-\u001f]/.test(token))
    throw new UsageError(`the token in ${options.tokenEnv} must be at least ${MIN_TOKEN_LENGTH} characters without spaces or control characters`);
  return token;
}

export async function run(options: ServeOptions, ctx: CliContext): Promise<number> {
  // Arguments first: a bad flag is named before any file is read.
  const { host, port } = parseListen(options.listen ?? '127.0.0.1:8700', '--listen');
  const token = tokenFrom(options, ctx.env);
  const allowedHosts = allowedHostsFrom(options);
  const { config } = await loadCommandConfig(options, ctx);
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  let queue: ExperimentQueue | undefined;
  const quiet = { ...ctx, err: () => undefined };
  try {
    await store.init();
    queue = token ? await queueFor(config, store, ctx.cwd) : undefined;
    const actions: DashboardActions | undefined = queue && {
      cancel: async (id, reason) => {
        const result = await queue!.cancel(id, reason);
        return result === 'unknown' ? undefined : CANCEL_WORDS[result];
      },
      calibrate: async (workload) => {
        const { id, deduplicated } = await queue!.submit(parseRequest({ workload, kind: 'aa', stage: 'periodic' }));
        return { id, deduplicated };
      },
    };
    const server = await startDashboard(
      {
        store,
        clock: systemClock,
        workloads: config.workloads,
        lattices: config.lattices,
        workload: (name) => config.workloads.find((w) => w.name === name),
        report: async (record) => {
          const workload = workloadFor(config, record.workload, quiet);
          const calibration = await latestCalibration(store, record.workload);
          const checks = workload.harness.checksModule !== undefined ? await loadChecksModule(workload.harness.checksModule, ctx.cwd) : undefined;
          const grpcSchema = workload.harness.responses?.grpc !== undefined ? await loadGrpcSchema(workload.harness.responses.grpc, ctx.cwd) : undefined;
          return evaluateExperiment(store, record.id, {
            workload,
            ...(calibration ? { calibration } : {}),
            ...(checks ? { checks } : {}),
            ...(grpcSchema ? { grpcSchema } : {}),
          });
        },
        ...(actions ? { actions } : {}),
        log: (line) => ctx.err(line),
      },
      { host, port, allowedHosts, ...(token ? { token } : {}) },
    );
    ctx.out(
      options.json
        ? JSON.stringify({ dashboard: 'ready', url: server.url, actions: token !== undefined, answersTo: server.answersTo })
        : `Tandem dashboard: ${server.url}/ (${token ? `actions enabled with the token in ${options.tokenEnv}` : 'read-only'}; store ${store.location}). Ctrl-C stops it.`,
    );
    // Listening wider than loopback is not a reason to answer any name: say which, and how to add one.
    if (!options.json)
      ctx.err(
        `answers only to Host ${server.answersTo.join(', ')}${allowedHosts.length === 0 && !/^(127\.|localhost$|::1$)/.test(host) ? `; listening on ${host}, so add --allowed-host NAME for each name others reach it by` : ''}`,
      );
    await new Promise<void>((resolve) => {
      if (!ctx.signal || ctx.signal.aborted) return resolve();
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await server.close();
    return ExitCode.ok;
  } finally {
    await queue?.close();
    await store.close();
  }
}
