/**
 * One experiment step of the demo: submit the request to the queue, follow
 * the experiment in the store (the only thing both queues share with this
 * process) with a progress line per trial, then judge it, write its HTML
 * report and pick the figures the summary shows.
 */
import { systemClock, type ExperimentRecord, type TandemConfig } from '../../core/index.js';
import type { Store } from '../../store/index.js';
import { writeFileAtomic } from '../../store/index.js';
import { formatLook, isTerminal, parseRequest, type ExperimentQueue, type LookSummary } from '../../executor/index.js';
import { evaluateExperiment, renderHtml, type ExperimentReport } from '../../harness/index.js';

export interface ExperimentStepOptions {
  readonly config: TandemConfig;
  readonly store: Store;
  readonly queue: ExperimentQueue;
  readonly change: string;
  readonly treatmentRevision?: string;
  /** The trials' pairs per second where it differs from the config's (the request's overrides). */
  readonly rate?: number;
  /** The trials' measured seconds where they differ from the config's (the request's overrides). */
  readonly measureSeconds?: number;
  readonly reportPath: string;
  readonly progress: (line: string) => void;
  readonly signal?: AbortSignal;
  /** Longest wait for the experiment to end. */
  readonly timeoutMs: number;
}

export interface ExperimentStepResult {
  readonly id: string;
  readonly status: string;
  readonly report: ExperimentReport;
  readonly reportPath: string;
  /** Wall time from submission to the stored verdict. */
  readonly seconds: number;
}

const pollMs = 250;

function overridesOf(options: ExperimentStepOptions): { rate?: number; measureMs?: number } | undefined {
  if (options.rate === undefined && options.measureSeconds === undefined) return undefined;
  return {
    ...(options.rate !== undefined ? { rate: options.rate } : {}),
    ...(options.measureSeconds !== undefined ? { measureMs: options.measureSeconds * 1000 } : {}),
  };
}

function describeTrials(record: ExperimentRecord, max: number): string {
  const done = record.trials.filter((t) => t.status === 'completed').length;
  const running = record.trials.find((t) => t.status === 'running');
  return running ? `trial ${running.index + 1} running (${done} done, at most ${max})` : `${done} trial(s) done`;
}

export async function runExperimentStep(options: ExperimentStepOptions): Promise<ExperimentStepResult> {
  const workload = options.config.workloads.find((w) => w.name === 'ranking')!;
  const overrides = overridesOf(options);
  const request = parseRequest({
    workload: 'ranking',
    stage: 'diff',
    change: options.change,
    ...(options.treatmentRevision ? { treatmentRevision: options.treatmentRevision } : {}),
    ...(overrides ? { overrides } : {}),
  });
  const { id } = await options.queue.submit(request);
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  let record: ExperimentRecord | undefined;
  let looks = 0;
  for (;;) {
    record = await options.store.experiments.get(id);
    if (record && isTerminal(record.status)) break;
    if (options.signal?.aborted) {
      await options.queue.cancel(id, 'demo interrupted');
      throw options.signal.reason instanceof Error ? options.signal.reason : new Error('interrupted');
    }
    if (Date.now() > deadline) {
      await options.queue.cancel(id, 'demo step timed out');
      throw new Error(`experiment ${id} did not finish within ${options.timeoutMs / 1000} s (status ${record?.status ?? 'unknown'})`);
    }
    // Each sequential look the executor stored: its estimates and whether the judge has decided.
    const lookEvents = record ? await options.store.experiments.events(id, { types: ['look'] }) : [];
    for (const event of lookEvents.slice(looks)) options.progress(formatLook(event.data as unknown as LookSummary));
    looks = lookEvents.length;
    options.progress(`experiment ${id}: ${record ? `${record.status}, ${describeTrials(record, workload.trials.max)}` : 'queued'}`);
    // An abort ends the wait early; the loop then cancels the experiment.
    await systemClock.sleep(pollMs, options.signal).catch(() => undefined);
  }
  const report = await evaluateExperiment(options.store, id, { workload });
  await writeFileAtomic(options.reportPath, renderHtml(report));
  return { id, status: record.status, report, reportPath: options.reportPath, seconds: (Date.now() - started) / 1000 };
}

/** "+4.9% [+4.8%, +5.0%]" for a metric of the report, or undefined when it has no estimate. */
export function effectOf(report: ExperimentReport, metric: string): { text: string; verdict: string; estimate: number; low: number; high: number } | undefined {
  const m = report.metrics.find((x) => x.metric === metric);
  if (!m || !Number.isFinite(m.estimate)) return undefined;
  const pct = (v: number): string => `${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)}%`;
  return { text: `${pct(m.estimate)} [${pct(m.low)}, ${pct(m.high)}]`, verdict: m.verdict, estimate: m.estimate, low: m.low, high: m.high };
}
