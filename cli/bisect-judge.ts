/**
 * One bisection step as an experiment: the candidate revision deployed as
 * treatment against the good revision as control, through the workload's
 * deploy template, run in this process. Regressed → bad; passed with the
 * metric of interest settled → good; a revision that cannot be deployed →
 * skip; inconclusive → one retry with twice the trials, then skip.
 */
import { InternalError, systemClock, UsageError, type TandemConfig, type WorkloadConfig } from '../core/index.js';
import type { Store } from '../store/index.js';
import { InlineQueue, endedWithoutVerdict, parseRequest } from '../executor/index.js';
import type { StepOutcome } from '../triggers/index.js';
import { runnerFor } from './experiment-options.js';

interface JudgedMetric {
  readonly metric: string;
  readonly verdict: string;
}

/**
 * A bisection log holds one line per step: the first undecided cause, its first line, and how many more there were.
 * The experiment's own record keeps every cause in full.
 */
export function oneLineReason(causes: readonly string[]): string {
  const first = (causes.find((cause) => cause.trim() !== '') ?? 'no verdict').trim().split('\n')[0]!;
  const more = causes.filter((cause) => cause.trim() !== '').length - 1;
  return more > 0 ? `${first} (and ${more} more)` : first;
}

export function bisectWorkload(config: TandemConfig, name: string): WorkloadConfig {
  const workload = config.workloads.find((w) => w.name === name);
  if (!workload)
    throw new UsageError(`no workload named ${JSON.stringify(name)} in the config (known: ${config.workloads.map((w) => w.name).join(', ') || 'none'})`);
  if (!workload.arms?.control.deploy || !workload.arms.treatment.deploy)
    throw new UsageError(`workload ${name} needs deploy commands for both arms (with {revision}) to test revisions`);
  return workload;
}

export async function judgeRevision(options: {
  config: TandemConfig;
  store: Store;
  cwd: string;
  workload: WorkloadConfig;
  good: string;
  revision: string;
  metric?: string | undefined;
  signal?: AbortSignal | undefined;
}): Promise<StepOutcome> {
  const { workload } = options;
  const queue = new InlineQueue({ store: options.store, clock: systemClock, run: runnerFor(options.config, options.store, options.cwd), concurrency: 1 });
  const onAbort = (): void => void queue.close();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (const attempt of [1, 2]) {
      // Each step is judged sequentially; an undecided step is retried once with twice the maximum.
      const trials = workload.trials.max * attempt;
      const request = parseRequest({
        workload: workload.name,
        stage: 'diff',
        change: `bisect:${options.good}:${options.revision}${attempt > 1 ? ':retry' : ''}`,
        controlRevision: options.good,
        treatmentRevision: options.revision,
        ...(attempt > 1 ? { overrides: { maxTrials: trials, minTrials: Math.min(workload.trials.min, trials) } } : {}),
      });
      const { id } = await queue.submit(request);
      await queue.idle();
      const record = (await options.store.experiments.get(id))!;
      if (record.status === 'cancelled') return { verdict: 'skip', reason: `cancelled: ${record.reason ?? ''}`, experimentId: id };
      const noVerdict = endedWithoutVerdict(record);
      if (record.status === 'failed' && !noVerdict) {
        // A revision that does not build or start fails its trials for infrastructure reasons: git bisect's "skip".
        return { verdict: 'skip', reason: `could not be tested: ${(record.reason ?? 'failed').split('\n')[0]}`, experimentId: id };
      }
      const metrics = (record.verdict?.metrics as JudgedMetric[] | undefined) ?? [];
      const focus = options.metric === undefined ? undefined : metrics.find((m) => m.metric === options.metric);
      if (options.metric !== undefined && !noVerdict && focus === undefined)
        return { verdict: 'skip', reason: `metric ${options.metric} is not judged in this workload (add a check for it)`, experimentId: id };
      let inconclusive: string | undefined;
      if (noVerdict) inconclusive = oneLineReason([record.reason ?? 'no verdict']);
      else if (focus !== undefined) {
        if (focus.verdict === 'regression') return { verdict: 'bad', reason: `${focus.metric} regressed`, experimentId: id };
        if (focus.verdict === 'inconclusive' || focus.verdict === 'no data') inconclusive = `${focus.metric} ${focus.verdict}`;
        else return { verdict: 'good', reason: `${focus.metric}: ${focus.verdict}`, experimentId: id };
      } else if (record.status === 'inconclusive') {
        inconclusive = `inconclusive: ${oneLineReason((record.verdict?.undecided as string[] | undefined) ?? ['a critical metric undecided'])}`;
      } else {
        // Without a metric to chase, the experiment's verdict decides.
        const regressed = metrics.filter((m) => m.verdict === 'regression').map((m) => m.metric);
        return record.status === 'regressed'
          ? { verdict: 'bad', reason: `regressed: ${regressed.join(', ')}`, experimentId: id }
          : { verdict: 'good', reason: 'passed', experimentId: id };
      }
      if (attempt === 2)
        return { verdict: 'skip', reason: `inconclusive twice (${inconclusive}), the second time with up to ${trials} trials`, experimentId: id };
    }
    throw new InternalError('bisect judge: no outcome after the last attempt');
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    await queue.close();
  }
}
