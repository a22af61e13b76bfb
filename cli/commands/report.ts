/**
 * `tandem report <experiment> [--format json|md|html] [--out FILE]`: judge a
 * stored experiment and render its report. The verdict is stored on the
 * experiment record; the exit code is the verdict's (0 passed, 1 regressed,
 * 4 no verdict, 2 cancelled or failed experiments).
 */
import { resolve } from 'node:path';
import { UsageError, configSchema, type ExperimentRecord, type TandemConfig, type WorkloadConfig } from '../../core/index.js';
import { createStore, writeFileAtomic } from '../../store/index.js';
import {
  evaluateExperiment,
  loadChecksModule,
  loadGrpcSchema,
  renderHtml,
  renderJson,
  renderMarkdown,
  renderText,
  type ExperimentReport,
} from '../../harness/index.js';
import { endedWithoutVerdict, latestCalibration } from '../../executor/index.js';
import { ExitCode, exitCodeForRecord } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';

export interface ReportOptions extends GlobalOptions {
  readonly format?: string;
  readonly out?: string;
  readonly calibration?: boolean;
}

const FORMATS = ['json', 'md', 'html', 'text'] as const;
type Format = (typeof FORMATS)[number];

/** The workload an experiment ran, from the config; defaults when it has since been removed from it. */
export function workloadFor(config: TandemConfig, name: string, ctx: CliContext): WorkloadConfig {
  const found = config.workloads.find((w) => w.name === name);
  if (found) return found;
  ctx.err(`warning: workload ${name} is no longer in the config; judging with default checks`);
  return configSchema.parse({ workloads: [{ name, tier: name }] }).workloads[0]!;
}

/**
 * The exit code of a report: the one `run` gave (exit-codes.ts). A cancelled
 * experiment, or one that failed before reaching a verdict (its trials failed,
 * its store failed), is 2 whatever re-judging its partial data would say now;
 * one that ended for lack of data is 4.
 */
export function exitCodeForReport(report: ExperimentReport, stored?: ExperimentRecord): number {
  if (stored !== undefined && (stored.status === 'cancelled' || stored.status === 'failed')) return exitCodeForRecord(stored);
  if (report.experiment.status === 'cancelled' || (report.experiment.status === 'failed' && report.verdict.outcome !== 'no data')) return ExitCode.failure;
  const byOutcome = { passed: ExitCode.ok, regressed: ExitCode.regression, inconclusive: ExitCode.inconclusive, 'no data': ExitCode.noVerdict } as const;
  return byOutcome[report.verdict.outcome];
}

export function render(report: ExperimentReport, format: Format): string {
  return format === 'json' ? `${renderJson(report)}\n` : format === 'md' ? renderMarkdown(report) : format === 'text' ? renderText(report) : renderHtml(report);
}

/** The format when none is asked for: JSON under --json, words for a terminal, Markdown for a CI log or a pipe. */
export function defaultFormat(options: { readonly json?: boolean | undefined }, writingToFile = false): Format {
  if (options.json) return 'json';
  return !writingToFile && process.stdout.isTTY ? 'text' : 'md';
}

export async function run(experimentId: string, options: ReportOptions, ctx: CliContext): Promise<number> {
  const format = (options.format ?? defaultFormat(options, options.out !== undefined)) as Format;
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got ${JSON.stringify(options.format)}`);
  const { config } = await loadCommandConfig(options, ctx);
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  try {
    const record = await store.experiments.get(experimentId);
    if (!record) throw new UsageError(`no experiment ${JSON.stringify(experimentId)} in the store at ${store.location}`);
    const workload = workloadFor(config, record.workload, ctx);
    const calibration = options.calibration === false ? undefined : await latestCalibration(store, record.workload);
    const checks = workload.harness.checksModule !== undefined ? await loadChecksModule(workload.harness.checksModule, ctx.cwd) : undefined;
    const grpcSchema = workload.harness.responses?.grpc !== undefined ? await loadGrpcSchema(workload.harness.responses.grpc, ctx.cwd) : undefined;
    const report = await evaluateExperiment(store, experimentId, {
      workload,
      ...(calibration ? { calibration } : {}),
      ...(checks ? { checks } : {}),
      ...(grpcSchema ? { grpcSchema } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    // An experiment that was cancelled or failed keeps what it ended with: re-judging its partial data must
    // not turn a crashed run into "no verdict" (exit 4) for the next `wait`.
    const endedByFailure = record.status === 'cancelled' || (record.status === 'failed' && !endedWithoutVerdict(record));
    if (!endedByFailure)
      await store.experiments.put({
        ...record,
        updatedAtMs: Math.max(Date.now(), record.updatedAtMs + 1),
        verdict: {
          ...(record.verdict ?? {}),
          outcome: report.verdict.outcome,
          reasons: report.verdict.reasons,
          decided: report.verdict.decided,
          undecided: report.verdict.undecided,
          judgedAt: report.generatedAt,
          metrics: report.metrics
            .filter((m) => m.judged)
            .map((m) => ({ metric: m.metric, verdict: m.verdict, estimate: m.estimate, low: m.low, high: m.high })),
        },
      });
    const text = render(report, format);
    if (options.out !== undefined) {
      // Written whole or not at all: a CI artifact is never a torn file.
      const target = resolve(ctx.cwd, options.out);
      await writeFileAtomic(target, text);
      ctx.err(`report written to ${target}: ${report.verdict.outcome}`);
    } else ctx.out(text);
    return exitCodeForReport(report, record);
  } finally {
    await store.close();
  }
}
