/**
 * `tandem lattice validate --lattice NAME --workload W [--states L1,L2 | --base REV [--head REV]]`:
 * each candidate state (default: every state but the first; with --base, the
 * states whose level for the workload's service the change altered, as
 * `tandem affected` selects them) as a paired
 * experiment of the same build, the treatment forced into the state by the
 * test-scenario header; prints the states side by side and whether the
 * lattice keeps its promise (exit 0) or not (exit 1).
 */
import { UsageError, systemClock, type TandemConfig } from '../../core/index.js';
import { createStore, type Store } from '../../store/index.js';
import { selectForChange } from '../../triggers/index.js';
import { InlineQueue, endedWithoutVerdict, parseRequest } from '../../executor/index.js';
import { evaluateExperiment } from '../../harness/index.js';
import { checkPromise, levelsHeaderValue, measureState } from '../../lattice/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { parsePositiveInteger } from '../arguments.js';
import { runnerFor } from '../experiment-options.js';
import { workloadFor } from './report.js';

export interface ValidateOptions extends GlobalOptions {
  readonly lattice: string;
  readonly workload: string;
  readonly states?: string;
  readonly control?: string;
  readonly trials?: string;
  readonly header?: string;
  readonly base?: string;
  readonly head?: string;
  readonly repo?: string;
}

/** The states a change made candidates for this lattice and workload (`tandem affected`'s candidateStates). */
async function statesFromChange(
  options: ValidateOptions,
  config: TandemConfig,
  store: Store,
  latticeName: string,
  cwd: string,
): Promise<{ states: string[]; why: string }> {
  const selection = await selectForChange({
    config,
    repo: options.repo ?? cwd,
    base: options.base!,
    head: options.head ?? 'HEAD',
    configReads: store.configReads,
    nowMs: Date.now(),
  });
  const selected = selection.selected.find((s) => s.workload === options.workload);
  const range = `${selection.base.slice(0, 12)}..${selection.head.slice(0, 12)}`;
  // A lattice file holding several lattices names its states "lattice/state".
  const states = (selected?.candidateStates ?? []).flatMap((name) => {
    const slash = name.indexOf('/');
    if (slash === -1) return [name];
    return name.slice(0, slash) === latticeName ? [name.slice(slash + 1)] : [];
  });
  return { states: [...new Set(states)], why: `changed by ${range}` };
}

export async function validate(options: ValidateOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx);
  const lattice = config.lattices.find((l) => l.name === options.lattice);
  if (!lattice)
    throw new UsageError(
      `no lattice named ${JSON.stringify(options.lattice)} in the config (known: ${config.lattices.map((l) => l.name).join(', ') || 'none'})`,
    );
  if (!config.workloads.some((w) => w.name === options.workload)) throw new UsageError(`no workload named ${JSON.stringify(options.workload)} in the config`);
  if (options.states !== undefined && options.base !== undefined) throw new UsageError('give --states or --base (the states a change altered), not both');
  if (options.head !== undefined && options.base === undefined) throw new UsageError('--head needs --base');
  const header = options.header ?? 'x-tandem-levels';
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  const queue = new InlineQueue({ store, clock: systemClock, run: runnerFor(config, store, ctx.cwd), concurrency: 1 });
  try {
    await store.init();
    let wanted = options.states?.split(',').map((s) => s.trim()) ?? lattice.states.slice(1).map((s) => s.name);
    if (options.base !== undefined) {
      const fromChange = await statesFromChange(options, config, store, lattice.name, ctx.cwd);
      if (fromChange.states.length === 0) {
        ctx.out(
          options.json
            ? JSON.stringify({
                ok: true,
                states: [],
                checks: [],
                reason: `no state of lattice ${lattice.name} ${fromChange.why} for workload ${options.workload}`,
              })
            : `no state of lattice ${lattice.name} ${fromChange.why} for workload ${options.workload}: nothing to validate`,
        );
        return ExitCode.ok;
      }
      wanted = fromChange.states;
      ctx.err(`candidate states ${fromChange.why}: ${wanted.join(', ')}`);
    }
    const unknown = wanted.filter((name) => !lattice.states.some((s) => s.name === name));
    if (unknown.length > 0)
      throw new UsageError(
        `${options.base !== undefined ? 'the change names' : '--states:'} no state ${unknown.join(', ')} in lattice ${lattice.name} (states: ${lattice.states.map((s) => s.name).join(', ')})`,
      );
    const workload = workloadFor(config, options.workload, ctx);
    const measurements = [];
    for (const name of wanted) {
      const state = lattice.states.find((s) => s.name === name)!;
      const request = parseRequest({
        workload: options.workload,
        stage: 'release',
        change: `lattice:${lattice.name}:${name}:${levelsHeaderValue(state.levels)}:${Date.now()}`,
        sameBuild: true,
        treatmentHeaders: { [header]: levelsHeaderValue(state.levels) },
        ...(options.control ? { control: options.control } : {}),
        ...(options.trials ? { overrides: { trials: parsePositiveInteger(options.trials, '--trials') } } : {}),
      });
      const { id } = await queue.submit(request);
      ctx.err(`state ${name} (${levelsHeaderValue(state.levels)}): experiment ${id}`);
      await queue.idle();
      const record = (await store.experiments.get(id))!;
      if (record.status === 'cancelled' || (record.status === 'failed' && !endedWithoutVerdict(record))) {
        ctx.err(`state ${name}: experiment ${record.status}: ${record.reason ?? ''}`);
        return ExitCode.failure;
      }
      measurements.push(measureState(name, await evaluateExperiment(store, id, { workload })));
    }
    const result = checkPromise(lattice, measurements);
    if (options.json) ctx.out(JSON.stringify(result));
    else {
      ctx.out(`lattice ${lattice.name}, workload ${options.workload}: ${result.ok ? 'keeps its promise' : 'BREAKS its promise'}`);
      ctx.out(`  ${'state'.padEnd(8)} ${'capacity reclaimed'.padStart(20)} ${'NDCG loss'.padStart(10)} ${'no-result'.padStart(10)}  experiment`);
      for (const s of result.states)
        ctx.out(
          `  ${s.state.padEnd(8)} ${`${(s.capacityReclaimed * 100).toFixed(1)}% (${s.capacityMeasure === 'cpu_per_request' ? 'CPU' : s.capacityMeasure === 'calls' ? 'calls' : 'latency'})`.padStart(20)} ${s.ndcgLoss.toFixed(4).padStart(10)} ${`${(s.noResultShare * 100).toFixed(2)}%`.padStart(10)}  ${s.experimentId}`,
        );
      for (const c of result.checks) ctx.out(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
    }
    return result.ok ? ExitCode.ok : ExitCode.regression;
  } finally {
    await queue.close();
    await store.close();
  }
}
