/**
 * `tandem run <workload>`: one experiment now, in this process (the inline
 * queue), whatever queue the config names: queued → running → verdict, then
 * the report. `--aa --every 6h` repeats an A/A calibration on a schedule.
 * Exit 0 passed, 1 regressed, 2 cancelled or failed, 4 no verdict, 5
 * inconclusive. A progress line follows the trials and each sequential look.
 */
import { systemClock } from '../../core/index.js';
import { createStore } from '../../store/index.js';
import { InlineQueue, endedWithoutVerdict, formatLook, latestCalibration, waitForRunner, type LookSummary } from '../../executor/index.js';
import { evaluateExperiment, loadGrpcSchema } from '../../harness/index.js';
import { ExitCode, exitCodeForRecord } from '../exit-codes.js';
import { loadCommandConfig, type CliContext } from '../cli-context.js';
import { parsePositiveInteger, parseTimerDurationFlag } from '../arguments.js';
import { requestFromFlags, runnerFor, workloadLimits, type ExperimentFlags } from '../experiment-options.js';
import { progressLine } from './replay.js';

import { defaultFormat, exitCodeForReport, render, workloadFor } from './report.js';

export interface RunOptions extends ExperimentFlags {
  readonly format?: string;
  readonly every?: string;
  readonly times?: string;
}

/** What a cancelled experiment's record says when this process was interrupted: who stopped it, and how. */
export function interruptionReason(reason: unknown): string {
  const signal = /\b(SIG[A-Z]+)\b/.exec(reason instanceof Error ? reason.message : String(reason))?.[1];
  if (signal === 'SIGINT') return 'cancelled by the user (SIGINT)';
  if (signal !== undefined) return `cancelled: tandem was told to stop (${signal})`;
  return 'cancelled: tandem was told to stop';
}

export async function run(workloadName: string, options: RunOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx, true);
  const request = requestFromFlags(workloadName, config, options);
  const everyMs = options.every !== undefined ? parseTimerDurationFlag(options.every, '--every', true) : undefined;
  const times = options.times !== undefined ? parsePositiveInteger(options.times, '--times') : everyMs === undefined ? 1 : Number.POSITIVE_INFINITY;
  const format = (options.format ?? defaultFormat(options)) as Parameters<typeof render>[1];
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  const configured = config.workloads.find((w) => w.name === workloadName)!;
  const trials = progressLine(ctx, request.overrides?.trials ?? request.overrides?.maxTrials ?? configured.trials.max);
  const show = {
    onProgress: trials,
    onLook: (look: LookSummary) => {
      if (process.stderr.isTTY) process.stderr.write('\r\x1b[2K');
      ctx.err(formatLook(look));
    },
  };
  const queue = new InlineQueue({
    store,
    clock: systemClock,
    run: runnerFor(config, store, ctx.cwd, show),
    concurrency: 1,
    workloadLimits: workloadLimits(config),
  });
  const onAbort = (): void => void queue.close(interruptionReason(ctx.signal?.reason));
  ctx.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await store.init();
    let code: number = ExitCode.ok;
    for (let round = 0; round < times && !ctx.signal?.aborted; round++) {
      if (round > 0) {
        try {
          await systemClock.sleep(everyMs!, ctx.signal);
        } catch {
          break;
        }
      }
      let submitted = await queue.submit(request);
      ctx.err(
        `${submitted.deduplicated ? 'already submitted' : 'running'}: experiment ${submitted.id} (${request.kind}, ${request.workload}, stage ${request.stage})`,
      );
      await queue.idle();
      // Another runner holds it: wait for its verdict; if that runner dies (its lease lapses), take the run over.
      for (let owner = queue.heldElsewhere.get(submitted.id); owner !== undefined; owner = queue.heldElsewhere.get(submitted.id)) {
        ctx.err(`experiment ${submitted.id} is being run by ${owner}; waiting for its verdict`);
        if ((await waitForRunner(store, submitted.id, systemClock, ctx.signal)) !== undefined) break;
        submitted = await queue.submit(request);
        await queue.idle();
      }
      if (process.stderr.isTTY) process.stderr.write('\n');
      const record = (await store.experiments.get(submitted.id))!;
      const endedByFailure = record.status === 'cancelled' || (record.status === 'failed' && !endedWithoutVerdict(record));
      // A cancellation's reason often starts with "cancelled: " itself: said once.
      if (endedByFailure)
        ctx.err(
          `experiment ${record.id} ${record.reason?.startsWith(`${record.status} `) ? record.reason : `${record.status}${record.reason ? `: ${record.reason.replace(new RegExp(`^${record.status}: `), '')}` : ''}`}`,
        );
      if (request.kind !== 'experiment') {
        ctx.out(
          options.json
            ? JSON.stringify({ id: record.id, status: record.status, verdict: record.verdict ?? null })
            : `experiment ${record.id}: ${record.status}`,
        );
        if (endedByFailure) code = exitCodeForRecord(record);
        continue;
      }
      // The report is printed for cancelled and failed experiments too: what ran, what the monitors saw, why it stopped.
      const workload = workloadFor(config, record.workload, ctx);
      const calibration = await latestCalibration(store, record.workload);
      const grpcSchema = workload.harness.responses?.grpc !== undefined ? await loadGrpcSchema(workload.harness.responses.grpc, ctx.cwd) : undefined;
      const report = await evaluateExperiment(store, record.id, { workload, ...(calibration ? { calibration } : {}), ...(grpcSchema ? { grpcSchema } : {}) });
      ctx.out(render(report, format));
      code = exitCodeForReport(report, record);
    }
    return code;
  } finally {
    ctx.signal?.removeEventListener('abort', onAbort);
    await queue.close();
    await store.close();
  }
}
