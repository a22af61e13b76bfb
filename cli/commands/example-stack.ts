/**
 * `tandem example-stack`: start the example serving stack and keep it up
 * until Ctrl-C; or, with `--service NAME`, run one of its services
 * configured from the environment (FEATURES_URL, INFERENCE_URL, RANKING_URL,
 * PREDICTION_SHARDS, STACK_FAULTS), as a deploy command of an arm does.
 */
import { once } from 'node:events';
import { UsageError } from '../../core/errors.js';
import { parseListen, parsePositiveInteger, parseTimerDurationFlag } from '../arguments.js';
import type { StackService } from '../../examples/stack/index.js';
import { parseFaults } from '../../examples/stack/faults.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';

export interface ExampleStackOptions extends GlobalOptions {
  readonly service?: string;
  readonly port?: string;
  readonly faults?: string;
  readonly shards?: string;
  readonly isolate?: string;
  /** Play production traffic at this many requests per second. */
  readonly traffic?: string;
  /** With --traffic: how long, then stop. */
  readonly duration?: string;
}

async function untilInterrupted(signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return;
  if (!signal.aborted) await once(signal, 'abort');
}

export async function run(options: ExampleStackOptions, ctx: CliContext): Promise<number> {
  // One service, as an arm's deploy command starts it, loads only that service's code: every trial pays its
  // start-up twice. It reads no config (its dependencies come from the environment), so none is loaded.
  const { STACK_SERVICES, serviceConfigFromEnv, startService } = await import('../../examples/stack/run-service.js');
  if (options.service !== undefined) {
    if (!STACK_SERVICES.includes(options.service as StackService))
      throw new UsageError(`--service must be one of ${STACK_SERVICES.join(', ')}, got ${JSON.stringify(options.service)}`);
    // --faults (e.g. from a deploy command's {revision}) wins over STACK_FAULTS; an empty value means none.
    const config = {
      ...serviceConfigFromEnv(ctx.env),
      ...(options.port !== undefined ? { port: parseListen(options.port, '--port').port } : {}),
      ...(options.faults !== undefined ? { faults: parseFaults(options.faults) } : {}),
    };
    const running = await startService(options.service, config);
    ctx.out(options.json ? JSON.stringify({ service: options.service, urls: running.urls }) : `${options.service} listening on ${running.urls.join(', ')}`);
    await untilInterrupted(ctx.signal);
    await running.close();
    return ExitCode.ok;
  }
  await loadCommandConfig(options, ctx);
  const { startStack, generateTraffic } = await import('../../examples/stack/index.js');
  const isolate = (options.isolate ?? '').split(',').filter((s) => s !== '');
  for (const name of isolate)
    if (!STACK_SERVICES.includes(name as StackService))
      throw new UsageError(`--isolate takes services among ${STACK_SERVICES.join(', ')}, got ${JSON.stringify(name)}`);
  const stack = await startStack({
    faults: parseFaults(options.faults),
    shards: options.shards !== undefined ? parsePositiveInteger(options.shards, '--shards') : 4,
    isolate: isolate as StackService[],
  });
  try {
    if (options.json) ctx.out(JSON.stringify({ urls: stack.urls, pids: stack.pids }));
    else {
      ctx.out(`example stack up (Ctrl-C stops it):`);
      ctx.out(`  query       ${stack.urls.query}/recommend   POST {"surface":"home","viewer":7}`);
      ctx.out(`  ranking     ${stack.urls.ranking}/rank`);
      ctx.out(`  features    ${stack.urls.features}/features`);
      ctx.out(`  gateway     ${stack.urls.gateway}/infer`);
      stack.urls.shards.forEach((url, i) => ctx.out(`  shard-${i}     ${url}/infer  ${url}/errors`));
      ctx.out('  every service: /metrics /healthz /level');
    }
    if (options.traffic !== undefined) {
      const rate = Number(options.traffic);
      if (!(rate > 0) || rate > 10_000)
        throw new UsageError(`--traffic must be a rate in (0, 10000] requests per second, got ${JSON.stringify(options.traffic)}`);
      const durationMs = parseTimerDurationFlag(options.duration ?? '30s', '--duration');
      const result = await generateTraffic({
        url: stack.urls.query,
        rate,
        maxRequests: Math.ceil(rate * (durationMs / 1000)),
        maxDurationMs: durationMs,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
      ctx.out(
        options.json
          ? JSON.stringify({ traffic: result })
          : `traffic: ${result.sent} sent, ${result.ok} ok, ${result.failed} failed, ${result.dropped} dropped in ${(result.durationMs / 1000).toFixed(1)} s`,
      );
    } else {
      await untilInterrupted(ctx.signal);
    }
  } finally {
    await stack.stop();
  }
  return ExitCode.ok;
}
