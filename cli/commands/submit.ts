/**
 * `tandem submit <workload> --change C [--stage diff]`: enqueue an experiment
 * for `tandem worker`s (queue.kind: bullmq). The same change, workload, stage
 * and kind give the same experiment: a CI retry prints the existing id.
 */
import { UsageError } from '../../core/index.js';
import { createStore } from '../../store/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext } from '../cli-context.js';
import { queueFor, requestFromFlags, type ExperimentFlags } from '../experiment-options.js';

export async function run(workloadName: string, options: ExperimentFlags, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx);
  if (config.queue.kind !== 'bullmq') throw new UsageError('the inline queue runs experiments in the submitting process: use `tandem run`, or set queue.kind: bullmq and start `tandem worker`s');
  const request = requestFromFlags(workloadName, config, options);
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  const queue = queueFor(config, store, ctx.cwd);
  try {
    await store.init();
    const result = await queue.submit(request);
    if (options.json) ctx.out(JSON.stringify({ id: result.id, deduplicated: result.deduplicated, status: result.record.status }));
    else ctx.out(`${result.deduplicated ? 'already submitted' : 'submitted'}: ${result.id} (${result.record.status})`);
    return ExitCode.ok;
  } finally {
    await queue.close();
    await store.close();
  }
}
