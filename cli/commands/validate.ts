/** `tandem validate`: check the config and print every problem with its path. */
import { ConfigError, type TandemConfig } from '../../core/index.js';
import { loadGrpcSchema } from '../../net/index.js';
import { loadDependencySchemas } from '../../guardrails/index.js';
import { assertTargetsExist } from '../../triggers/index.js';
import { designWarnings, metricPolicies, thresholdWarnings } from '../../harness/index.js';
import { latestCalibration } from '../../executor/index.js';
import { createStore } from '../../store/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';

export async function run(options: GlobalOptions & { readonly repo?: string }, ctx: CliContext): Promise<number> {
  try {
    // With a build graph, the workloads are checked against it too: one validation, the one `affected` applies.
    const { config, path, graphTargets } = await loadCommandConfig(options, ctx, true, 'always');
    if (graphTargets !== undefined) assertTargetsExist(config.workloads, new Set(graphTargets.map((t) => t.name)));
    // Descriptor sets and .proto files are read now, so one that does not parse is found here, not mid-experiment.
    for (const [index, workload] of config.workloads.entries()) {
      const grpc = workload.harness.responses?.grpc;
      if (grpc !== undefined) await loadGrpcSchema(grpc, ctx.cwd, `workloads[${index}].harness.responses.grpc`);
      await loadDependencySchemas(workload.dependencies, ctx.cwd);
    }
    // Valid but unable to decide: said, not refused (a smoke workload may want a trial or two on purpose).
    const warnings = config.workloads.flatMap((w, index) =>
      designWarnings({ minTrials: w.trials.min, maxTrials: w.trials.max, slotted: w.arms?.control.deploy !== undefined, alpha: w.harness.alpha }).map(
        (text) => `workloads[${index}].trials: ${text}`,
      ),
    );
    warnings.push(...(await calibratedWarnings(config, ctx)));
    if (options.json) ctx.out(JSON.stringify({ valid: true, path, warnings, config }, null, 2));
    else {
      ctx.out(
        `${path}: valid (${config.workloads.length} workload${config.workloads.length === 1 ? '' : 's'}, store ${config.store.kind}, queue ${config.queue.kind})`,
      );
      for (const warning of warnings) ctx.err(`warning: ${warning}`);
    }
    return ExitCode.ok;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    if (options.json) ctx.out(JSON.stringify({ valid: false, source: error.source, issues: error.issues }, null, 2));
    else ctx.err(error.message);
    return ExitCode.badInput;
  }
}

/**
 * Thresholds a workload's last A/A calibration says its design cannot reach (harness/judge/design-check.ts). Read
 * from the store when it answers; a store that does not is one line, not a failed validation.
 */
async function calibratedWarnings(config: TandemConfig, ctx: CliContext): Promise<string[]> {
  if (config.workloads.length === 0) return [];
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  try {
    const warnings: string[] = [];
    for (const [index, w] of config.workloads.entries()) {
      const calibration = await latestCalibration(store, w.name);
      if (!calibration) continue;
      const thresholds = new Map(
        [...metricPolicies(w.checks).values()].filter((p) => p.critical && p.metric !== 'error_share').map((p) => [p.metric, p.threshold]),
      );
      const design = { thresholds, maxTrials: w.trials.max, budgetMs: w.trials.budget, trialMs: w.trials.warmup + w.trials.measure };
      warnings.push(...thresholdWarnings(design, calibration).map((text) => `workloads[${index}].checks: ${text}`));
    }
    return warnings;
  } catch (error) {
    return [`the workloads' calibrations were not read (${(error as Error).message.split('\n')[0]}): thresholds not checked against their noise`];
  } finally {
    await store.close().catch(() => undefined);
  }
}
