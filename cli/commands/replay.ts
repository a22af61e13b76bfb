/**
 * `tandem replay --workload W [--control URL --treatment URL]`: one paired
 * replay of the workload's corpus window, in trials, with a live progress
 * line and a summary. Outcomes and counters go to the store under a new
 * experiment id; `tandem report` turns them into a verdict.
 */
import { UsageError, systemClock, type TandemConfig, type TrialRecord, type WorkloadConfig } from '../../core/index.js';
import { createStore, type Store } from '../../store/index.js';
import type { ArmName, ArmProvider, ReplayProgress } from '../../replayer/index.js';
import { SharedSource, type EgressRouter } from '../../guardrails/index.js';
import { armsFor as armsForChoice, claimRun, holdRun, httpUrl, leaseHolder, replayExperiment } from '../../executor/index.js';
import { armDistributions, loadChecksModule } from '../../harness/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { parsePositiveInteger, parsePositiveNumber, parseTimerDurationFlag } from '../arguments.js';

/** One poller per (source, interval) for every experiment this process runs. */
export const sharedSource = new SharedSource(systemClock);

export interface ReplayOptions extends GlobalOptions {
  readonly workload: string;
  readonly control?: string;
  readonly treatment?: string;
  readonly controlRevision?: string;
  readonly treatmentRevision?: string;
  readonly seed?: string;
  readonly trials?: string;
  readonly rate?: string;
  readonly warmup?: string;
  readonly measure?: string;
  readonly controlPrime?: string;
}

export function findWorkload(config: TandemConfig, name: string): WorkloadConfig {
  const workload = config.workloads.find((w) => w.name === name);
  if (!workload)
    throw new UsageError(`no workload named ${JSON.stringify(name)} in the config (known: ${config.workloads.map((w) => w.name).join(', ') || 'none'})`);
  return workload;
}

export { httpUrl } from '../../executor/index.js';

/** Arms from the flags, else from the workload; deployed arms reach their dependencies through the router. */
export function armsFor(workload: WorkloadConfig, options: ReplayOptions, router: EgressRouter | undefined): ArmProvider {
  return armsForChoice(workload, options, router, systemClock);
}

export function withOverrides(workload: WorkloadConfig, options: ReplayOptions): WorkloadConfig {
  const trials = options.trials !== undefined ? parsePositiveInteger(options.trials, '--trials') : undefined;
  return {
    ...workload,
    replay: { ...workload.replay, ...(options.rate !== undefined ? { rate: parsePositiveNumber(options.rate, '--rate', 'pairs per second') } : {}) },
    trials: {
      ...workload.trials,
      // A plain replay has no judge to stop it: it runs the most trials the workload allows, or exactly --trials.
      ...(trials !== undefined ? { count: trials, min: trials, max: trials } : {}),
      ...(options.warmup !== undefined ? { warmup: parseTimerDurationFlag(options.warmup, '--warmup') } : {}),
      ...(options.measure !== undefined ? { measure: parseTimerDurationFlag(options.measure, '--measure') } : {}),
    },
  };
}

/** Each arm's answers in the completed trials, from the store's aggregates (no outcome is loaded; quantiles within 1%). */
async function summary(
  store: Store,
  experimentId: string,
  trials: readonly TrialRecord[],
): Promise<Record<ArmName, { requests: number; errors: number; p50: number; p90: number; p99: number }>> {
  const { arms } = await armDistributions(
    store,
    experimentId,
    trials.filter((t) => t.status === 'completed'),
  );
  const of = (arm: ArmName) => ({
    requests: arms[arm].requests,
    errors: arms[arm].errors,
    p50: arms[arm].latencyMs.p50,
    p90: arms[arm].latencyMs.p90,
    p99: arms[arm].latencyMs.p99,
  });
  return { control: of('control'), treatment: of('treatment') };
}

/**
 * Non-2xx answers and failures per arm, and how the treatment differs from control: a 404 the
 * production build answers too is no error of the change — what matters is the difference.
 */
function answers(control: number, treatment: number): string {
  const difference = treatment - control;
  return `not 2xx c ${control} t ${treatment}${difference === 0 ? ' (same as control)' : ` (treatment ${difference > 0 ? '+' : ''}${difference} vs control)`}`;
}

export function progressLine(ctx: CliContext, trials: number): (trial: number, attempt: number, p: ReplayProgress) => void {
  const tty = process.stderr.isTTY === true;
  let lastPrinted = 0;
  return (trial, attempt, p) => {
    const line = `trial ${trial + 1}/${trials}${attempt > 1 ? ` (attempt ${attempt})` : ''} ${p.phase} ${(p.remainingMs / 1000).toFixed(0)}s left | ${p.rate.toFixed(0)} pairs/s | in flight c ${p.inflight.control} t ${p.inflight.treatment} | ${answers(p.errors.control, p.errors.treatment)}${p.droppedPairs > 0 ? ` | dropped ${p.droppedPairs}` : ''}`;
    if (tty) process.stderr.write(`\r\x1b[2K${line}`);
    else if (Date.now() - lastPrinted >= 5_000) {
      lastPrinted = Date.now();
      ctx.err(line);
    }
  };
}

export async function run(options: ReplayOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx);
  const workload = withOverrides(findWorkload(config, options.workload), options);
  const seed = options.seed !== undefined ? parsePositiveInteger(options.seed, '--seed') : undefined;
  const checks = workload.harness.checksModule !== undefined ? await loadChecksModule(workload.harness.checksModule, ctx.cwd) : undefined;
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  // This process holds the experiment's lease while it replays, as `tandem run` does: killed, its lease lapses and
  // `tandem cancel` ends the experiment instead of signalling a runner that is gone (executor/run-lease.ts).
  const holder = leaseHolder();
  const released = new AbortController();
  let holding: Promise<void> | undefined;
  try {
    const controlPrime =
      options.controlPrime !== undefined ? httpUrl(options.controlPrime, '--control-prime') : workload.arms?.controlPrime?.url?.replace(/\/$/, '');
    const result = await replayExperiment({
      workload,
      store,
      clock: systemClock,
      sharedSource,
      kind: 'replay',
      deployed: options.control === undefined && workload.arms?.control.deploy !== undefined,
      arms: (router) => armsFor(workload, options, router),
      ...(seed !== undefined ? { seed } : {}),
      ...(controlPrime !== undefined ? { controlPrime } : {}),
      ...(checks?.during ? { duringChecks: checks.during } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      onProgress: progressLine(ctx, workload.trials.count),
      onStart: (experimentId, usedSeed) => {
        holding = claimRun(store, experimentId, holder, systemClock).then(() => holdRun(store, experimentId, holder, systemClock, released.signal));
        ctx.err(
          `replaying tier ${workload.corpus.tier ?? workload.tier} into ${workload.name}: experiment ${experimentId}, seed ${usedSeed}, ${workload.trials.count} trial(s) of ${workload.trials.warmup / 1000}s warm-up + ${workload.trials.measure / 1000}s at ${workload.replay.rate} pairs/s`,
        );
      },
    }).finally(async () => {
      if (process.stderr.isTTY) process.stderr.write('\n');
      released.abort();
      await holding?.catch(() => undefined);
    });
    const { experimentId, status, reason, cancellation } = result;
    const trials = result.record.trials;
    const stats = await summary(store, experimentId, trials);
    if (options.json)
      ctx.out(
        JSON.stringify({
          experimentId,
          status,
          seed: result.seed,
          trials,
          arms: stats,
          ...(cancellation ? { cancellation } : {}),
          ...(reason ? { reason } : {}),
        }),
      );
    else {
      ctx.out(`experiment ${experimentId}: ${status}${reason ? ` (${reason})` : ''}`);
      for (const t of trials)
        ctx.out(
          `  trial ${t.index + 1} attempt ${t.attempt}: ${t.status}${t.reason ? ` (${t.reason})` : ''}${t.details?.achievedRate !== undefined ? `, ${String(t.details.achievedRate)} pairs/s, slots ${JSON.stringify(t.details.slots)}` : ''}${typeof t.details?.otherWorkOnArmCpus === 'number' ? `, other work on the arms' CPUs ${Math.round(t.details.otherWorkOnArmCpus * 100)}%` : ''}`,
        );
      for (const arm of ['control', 'treatment'] as const) {
        const s = stats[arm];
        ctx.out(
          `  ${arm.padEnd(9)} ${s.requests} requests, ${s.errors} errors, latency p50 ${s.p50.toFixed(2)} ms, p90 ${s.p90.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms`,
        );
      }
      ctx.out(`  verdict: tandem report ${experimentId} --format md`);
    }
    return status === 'completed' ? ExitCode.ok : ExitCode.failure;
  } finally {
    await store.close();
  }
}
