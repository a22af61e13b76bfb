/**
 * `tandem lattice serve --lattice NAME [--listen 127.0.0.1:7300]`: run a
 * lattice's controller until SIGINT/SIGTERM. Services POST load-factors and
 * GET their levels; every decision (inputs, state, levels) is stored: as an
 * event of the pseudo-experiment `lattice-NAME` and as time series samples
 * (product_load_factor, lattice_state) that reports can draw.
 */
import { UsageError, systemClock } from '../../core/index.js';
import { createStore } from '../../store/index.js';
import { LatticeController, LoadFactors, startControllerServer, type Decision } from '../../lattice/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { parseListen } from '../arguments.js';

export interface LatticeServeOptions extends GlobalOptions {
  readonly lattice: string;
  readonly listen?: string;
  readonly tokenEnv?: string;
}

export async function serve(options: LatticeServeOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx);
  const lattice = config.lattices.find((l) => l.name === options.lattice);
  if (!lattice)
    throw new UsageError(
      `no lattice named ${JSON.stringify(options.lattice)} in the config (known: ${config.lattices.map((l) => l.name).join(', ') || 'none'})`,
    );
  const { host, port } = parseListen(options.listen ?? '127.0.0.1:7300', '--listen');
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  await store.init();
  const experimentId = `lattice-${lattice.name}`;
  const recent: Decision[] = [];
  const onDecision = async (decision: Decision): Promise<void> => {
    recent.push(decision);
    if (recent.length > 100) recent.shift();
    await Promise.all([
      store.experiments.appendEvent({
        experimentId,
        timeMs: decision.timeMs,
        type: 'decision',
        message: `${decision.previous} -> ${decision.state} (${decision.transition})`,
        data: { ...decision },
      }),
      store.samples.append([
        ...(decision.productLoadFactor !== null
          ? [{ experimentId, trial: 0, arm: 'controller', metric: 'product_load_factor', timeMs: decision.timeMs, value: decision.productLoadFactor }]
          : []),
        { experimentId, trial: 0, arm: 'controller', metric: 'lattice_state', timeMs: decision.timeMs, value: decision.stateIndex },
        ...Object.entries(decision.perService).map(([service, value]) => ({
          experimentId,
          trial: 0,
          arm: service,
          metric: 'load_factor',
          timeMs: decision.timeMs,
          value,
        })),
      ]),
    ]).catch((error: unknown) => ctx.err(`could not store decision: ${(error as Error).message}`));
  };
  const loadFactors = new LoadFactors(lattice, systemClock);
  const controller = new LatticeController({ lattice, loadFactors, clock: systemClock, onDecision });
  const token = ctx.env[options.tokenEnv ?? 'TANDEM_CONTROLLER_TOKEN'] || undefined;
  let server;
  try {
    server = await startControllerServer({ lattice, controller, loadFactors, host, port, token, recentDecisions: () => recent });
  } catch (error) {
    await store.close();
    throw error;
  }
  ctx.out(JSON.stringify({ controller: 'ready', lattice: lattice.name, url: server.url, decisionPeriodMs: lattice.decisionPeriod }));
  const stop = new AbortController();
  ctx.signal?.addEventListener('abort', () => stop.abort(), { once: true });
  await controller.run(stop.signal);
  await server.close();
  await store.close();
  return ExitCode.ok;
}
