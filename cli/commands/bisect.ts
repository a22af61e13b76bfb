/**
 * `tandem bisect --workload W --good R1 --bad R2 [--metric M]`: the first bad
 * revision between two, each step an experiment of the candidate against the
 * good revision. `tandem bisect-step --workload W --good R1` judges the
 * checked-out revision for `git bisect run` (exit 0 good, 1 bad, 125 skip).
 */
import { createStore } from '../../store/index.js';
import { bisectRevisions, resolveRevision, revisionsBetween } from '../../triggers/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { bisectWorkload, judgeRevision } from '../bisect-judge.js';

export interface BisectOptions extends GlobalOptions {
  readonly workload: string;
  readonly good: string;
  readonly bad?: string;
  readonly metric?: string;
  readonly repo?: string;
}

/** git bisect run's contract: 125 means "cannot test this revision". */
export const GIT_BISECT_SKIP = 125;

export async function run(options: BisectOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx, true);
  const workload = bisectWorkload(config, options.workload);
  const repo = options.repo ?? ctx.cwd;
  const good = await resolveRevision(repo, options.good, '--good');
  const bad = await resolveRevision(repo, options.bad ?? 'HEAD', '--bad');
  const revisions = await revisionsBetween(repo, good, bad);
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  try {
    await store.init();
    ctx.err(`bisecting ${revisions.length} revision(s) after ${good.slice(0, 12)} up to ${bad.slice(0, 12)} with workload ${workload.name}`);
    const result = await bisectRevisions(
      revisions,
      async (revision) => {
        const outcome = await judgeRevision({ config, store, cwd: ctx.cwd, workload, good, revision, metric: options.metric, signal: ctx.signal });
        ctx.err(`  ${revision.slice(0, 12)}: ${outcome.verdict} (${outcome.reason})`);
        return outcome;
      },
      ctx.signal ? { signal: ctx.signal } : {},
    );
    if (options.json) ctx.out(JSON.stringify(result));
    else {
      if (result.firstBad) ctx.out(`first bad revision: ${result.firstBad}`);
      else ctx.out(`the first bad revision is one of: ${result.candidates.join(', ')} (the others in between could not be tested)`);
      for (const step of result.steps) ctx.out(`  ${step.revision.slice(0, 12)} ${step.verdict.padEnd(4)} ${step.experimentId ?? ''} ${step.reason}`);
    }
    return result.firstBad ? ExitCode.ok : ExitCode.failure;
  } finally {
    await store.close();
  }
}

/** git aborts `git bisect run` on exit codes above 127: an error of ours must not be mistaken for "bad". */
export const GIT_BISECT_ABORT = 128;

export async function step(options: BisectOptions, ctx: CliContext): Promise<number> {
  try {
    return await judgeCheckout(options, ctx);
  } catch (error) {
    ctx.err(`tandem bisect-step: ${(error as Error).message} (exit ${GIT_BISECT_ABORT} stops git bisect run)`);
    return GIT_BISECT_ABORT;
  }
}

async function judgeCheckout(options: BisectOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx, true);
  const workload = bisectWorkload(config, options.workload);
  const repo = options.repo ?? ctx.cwd;
  const good = await resolveRevision(repo, options.good, '--good');
  const revision = await resolveRevision(repo, 'HEAD', 'HEAD');
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  try {
    await store.init();
    const outcome = await judgeRevision({ config, store, cwd: ctx.cwd, workload, good, revision, metric: options.metric, signal: ctx.signal });
    ctx.out(`${revision.slice(0, 12)}: ${outcome.verdict} (${outcome.reason})`);
    return outcome.verdict === 'good' ? 0 : outcome.verdict === 'bad' ? 1 : GIT_BISECT_SKIP;
  } finally {
    await store.close();
  }
}
