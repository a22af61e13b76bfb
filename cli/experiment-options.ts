/**
 * What `run` and `submit` share: the experiment request built from flags,
 * and the queue picked from the config (the CLI is where backends are chosen).
 */
import { UsageError, systemClock, type TandemConfig } from '../core/index.js';
import type { Store } from '../store/index.js';
import { InlineQueue, STAGES, httpUrl, parseRequest, runExperiment, type ExperimentQueue, type ExperimentRequest, type RunContext } from '../executor/index.js';
import { parsePositiveInteger, parsePositiveNumber, parseTimerDurationFlag } from './arguments.js';
import { sharedSource } from './commands/replay.js';
import type { GlobalOptions } from './cli-context.js';

export interface ExperimentFlags extends GlobalOptions {
  readonly control?: string;
  readonly treatment?: string;
  readonly controlRevision?: string;
  readonly treatmentRevision?: string;
  readonly stage?: string;
  readonly change?: string;
  readonly seed?: string;
  readonly trials?: string;
  readonly minTrials?: string;
  readonly maxTrials?: string;
  readonly budget?: string;
  readonly onInconclusive?: string;
  readonly rate?: string;
  readonly warmup?: string;
  readonly measure?: string;
  readonly aa?: boolean;
  readonly noop?: boolean;
}

export function requestFromFlags(workload: string, config: TandemConfig, flags: ExperimentFlags): ExperimentRequest {
  if (!config.workloads.some((w) => w.name === workload))
    throw new UsageError(`no workload named ${JSON.stringify(workload)} in the config (known: ${config.workloads.map((w) => w.name).join(', ') || 'none'})`);
  if (flags.stage !== undefined && !(STAGES as readonly string[]).includes(flags.stage))
    throw new UsageError(`--stage must be one of ${STAGES.join(', ')}, got ${JSON.stringify(flags.stage)}`);
  if ((flags.control === undefined) !== (flags.treatment === undefined) && !flags.aa) throw new UsageError('give both --control and --treatment, or neither');
  if (flags.trials !== undefined && (flags.minTrials !== undefined || flags.maxTrials !== undefined))
    throw new UsageError('give either --trials (a fixed horizon) or --min-trials/--max-trials (sequential), not both');
  if (flags.onInconclusive !== undefined && !ON_INCONCLUSIVE.includes(flags.onInconclusive))
    throw new UsageError(`--on-inconclusive must be one of ${ON_INCONCLUSIVE.join(', ')}, got ${JSON.stringify(flags.onInconclusive)}`);
  const overrides = {
    ...(flags.trials !== undefined ? { trials: parsePositiveInteger(flags.trials, '--trials') } : {}),
    ...(flags.minTrials !== undefined ? { minTrials: atLeastTwo(flags.minTrials, '--min-trials') } : {}),
    ...(flags.maxTrials !== undefined ? { maxTrials: atLeastTwo(flags.maxTrials, '--max-trials') } : {}),
    ...(flags.budget !== undefined ? { budgetMs: parseTimerDurationFlag(flags.budget, '--budget', true) } : {}),
    ...(flags.rate !== undefined ? { rate: parsePositiveNumber(flags.rate, '--rate', 'pairs per second') } : {}),
    ...(flags.warmup !== undefined ? { warmupMs: parseTimerDurationFlag(flags.warmup, '--warmup') } : {}),
    ...(flags.measure !== undefined ? { measureMs: parseTimerDurationFlag(flags.measure, '--measure') } : {}),
  };
  return parseRequest({
    workload,
    stage: flags.stage ?? (flags.aa ? 'periodic' : 'diff'),
    kind: flags.noop ? 'noop' : flags.aa ? 'aa' : 'experiment',
    ...(flags.change !== undefined ? { change: flags.change } : {}),
    ...(flags.control !== undefined ? { control: httpUrl(flags.control, '--control') } : {}),
    ...(flags.treatment !== undefined ? { treatment: httpUrl(flags.treatment, '--treatment') } : {}),
    ...(flags.controlRevision !== undefined ? { controlRevision: flags.controlRevision } : {}),
    ...(flags.treatmentRevision !== undefined ? { treatmentRevision: flags.treatmentRevision } : {}),
    ...(flags.seed !== undefined ? { seed: parsePositiveInteger(flags.seed, '--seed') } : {}),
    ...(flags.onInconclusive !== undefined ? { onInconclusive: flags.onInconclusive } : {}),
    ...(Object.keys(overrides).length > 0 ? { overrides } : {}),
  });
}

const ON_INCONCLUSIVE = ['pass', 'fail', 'inconclusive'];

function atLeastTwo(text: string, flag: string): number {
  const n = parsePositiveInteger(text, flag);
  if (n < 2) throw new UsageError(`${flag} must be at least 2 (a look needs two trials), got ${n}`);
  return n;
}

export function workloadLimits(config: TandemConfig): Map<string, number> {
  return new Map(config.workloads.filter((w) => w.concurrency !== undefined).map((w) => [w.name, w.concurrency!] as const));
}

/** The experiment runner of this process, optionally showing trial progress and each sequential look. */
export function runnerFor(
  config: TandemConfig,
  store: Store,
  cwd: string,
  show: Pick<RunContext, 'onProgress' | 'onLook'> = {},
): (id: string, signal: AbortSignal) => Promise<unknown> {
  return (id, signal) => runExperiment(id, { config, store, clock: systemClock, sharedSource, cwd, signal, ...show });
}

/** The configured queue: inline runs here; BullMQ needs workers (`tandem worker`). */
export async function queueFor(config: TandemConfig, store: Store, cwd: string): Promise<ExperimentQueue> {
  if (config.queue.kind === 'bullmq') {
    const { BullMqQueue } = await import('../executor/bullmq-queue.js');
    return BullMqQueue.open({ redisUrl: config.queue.redisUrl, prefix: config.queue.prefix, store, clock: systemClock });
  }
  return new InlineQueue({
    store,
    clock: systemClock,
    run: runnerFor(config, store, cwd),
    concurrency: config.queue.concurrency,
    workloadLimits: workloadLimits(config),
  });
}
