/**
 * `tandem submit`: experiments for a change, by lifecycle stage.
 *
 *   tandem submit <workload> --change C [--stage S]           one workload
 *   tandem submit --base REV --head REV [--stage S] [--wait]   every workload the change selects
 *
 * With `queue.kind: bullmq` experiments go to `tandem worker`s (`--wait`
 * blocks until they end); with the inline queue they run here and are
 * waited for. Workloads sampled out are stored as `deferred`, with the
 * reason. The summary is Markdown (a CI comment); the exit code is the
 * verdict: 0 all passed, 1 a regression, 2 cancelled or failed.
 *
 * With --base/--head the arms' `{revision}` is the base (control) and the head
 * (treatment), resolved to commits. A change submitted again reuses its
 * experiment, unless that failed, was cancelled or deferred (or --rerun): then
 * it runs again as the change's next attempt.
 */
import { UsageError, systemClock, type ExperimentRecord } from '../../core/index.js';
import { createStore, type Store } from '../../store/index.js';
import { InlineQueue, attemptIdFor, createQueued, isTerminal, parseRequest, transition } from '../../executor/index.js';
import { selectForChange, type ChangeSelection } from '../../triggers/index.js';
import { comparedText, escapeMarkdownCell } from '../../harness/index.js';
import { ExitCode, exitCodeForRecords } from '../exit-codes.js';
import { loadCommandConfig, type CliContext } from '../cli-context.js';
import { oneLine } from '../terminal-text.js';
import { experimentDetails } from '../ci-summary.js';
import { queueFor, requestFromFlags, type ExperimentFlags } from '../experiment-options.js';

export interface SubmitOptions extends ExperimentFlags {
  readonly base?: string;
  readonly head?: string;
  readonly repo?: string;
  readonly wait?: boolean;
  readonly timeout?: string;
  readonly rerun?: boolean;
}

function summary(records: readonly ExperimentRecord[], selection: ChangeSelection | undefined): string {
  const lines = ['### Tandem experiments', ''];
  if (selection)
    lines.push(
      `Change ${selection.base.slice(0, 12)}..${selection.head.slice(0, 12)}: ${selection.changedFiles.length} file(s), ${selection.selected.length} workload(s) selected, ${selection.deferred.length} deferred, ${selection.skipped.length} skipped.`,
      '',
    );
  if (records.length > 0) {
    lines.push('| Workload | Experiment | Compared | Status | Why |', '| --- | --- | --- | --- | --- |');
    for (const r of records) {
      const why =
        selection?.selected
          .find((s) => s.workload === r.workload)
          ?.reasons.map((reason) => reason.message)
          .join('; ') ??
        selection?.deferred.find((d) => d.workload === r.workload)?.reason.message ??
        '';
      // What each arm deployed (revision, and URL or command target), not only the change's short SHAs.
      const compared = comparedText(r.spec) ?? 'control vs treatment as configured';
      lines.push(
        `| ${escapeMarkdownCell(r.workload)} | ${escapeMarkdownCell(r.id)} | ${escapeMarkdownCell(compared)} | ${escapeMarkdownCell(r.status)}${r.reason && r.status !== 'passed' ? `: ${escapeMarkdownCell(oneLine(r.reason, 300))}` : ''} | ${escapeMarkdownCell(why)} |`,
      );
    }
  }
  for (const s of selection?.skipped ?? []) lines.push(`- skipped ${escapeMarkdownCell(s.workload)}: ${escapeMarkdownCell(s.reason.message)}`);
  return `${lines.join('\n')}\n`;
}

/** One line on where the experiments are: done count, and each unfinished one's status and trials so far. */
export function waitingLine(records: readonly ExperimentRecord[]): string {
  const done = records.filter((r) => isTerminal(r.status));
  const open = records
    .filter((r) => !isTerminal(r.status))
    .map((r) => `${r.workload} ${r.status}${r.status === 'running' ? ` (${r.trials.filter((t) => t.status === 'completed').length} trial(s) done)` : ''}`);
  return `waiting: ${done.length} of ${records.length} experiment(s) ended${done.length > 0 ? ` (${done.map((r) => `${r.workload} ${r.status}`).join(', ')})` : ''}${open.length > 0 ? `; ${open.join(', ')}` : ''}`;
}

/**
 * Poll until every experiment ends. Progress goes to stderr also when it is not a terminal (a CI log):
 * a line when something changed, at most every 5 s, and at least every 30 s so a silent log is never a hang.
 */
async function waitAll(
  store: Store,
  ids: readonly string[],
  deadlineMs: number,
  signal: AbortSignal | undefined,
  log: (line: string) => void,
): Promise<ExperimentRecord[]> {
  let said = '';
  let saidAtMs = 0;
  for (;;) {
    const records = (await Promise.all(ids.map((id) => store.experiments.get(id)))).filter((r): r is ExperimentRecord => r !== undefined);
    if (records.every((r) => isTerminal(r.status)) || Date.now() > deadlineMs || signal?.aborted) return records;
    const line = waitingLine(records);
    const sinceMs = systemClock.now() - saidAtMs;
    if ((line !== said && sinceMs >= 5_000) || sinceMs >= 30_000) {
      log(line);
      said = line;
      saidAtMs = systemClock.now();
    }
    await systemClock.sleep(250, signal).catch(() => undefined);
  }
}

export async function run(workloadName: string | undefined, options: SubmitOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx, true);
  if ((workloadName === undefined) === (options.base === undefined))
    throw new UsageError('name a workload, or give --base (and --head) to submit every workload the change selects');
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  const queue = await queueFor(config, store, ctx.cwd);
  try {
    await store.init();
    let selection: ChangeSelection | undefined;
    const ids: string[] = [];
    const deferredRecords: ExperimentRecord[] = [];
    if (workloadName !== undefined) {
      const result = await queue.submit(requestFromFlags(workloadName, config, options), { rerun: options.rerun === true });
      ids.push(result.id);
      if (!options.wait && queue.kind === 'bullmq')
        ctx.err(`${result.deduplicated ? 'already submitted' : 'submitted'}: ${result.id} (${result.record.status})`);
      if (options.json && !options.wait && queue.kind === 'bullmq') {
        ctx.out(JSON.stringify({ id: result.id, deduplicated: result.deduplicated, status: result.record.status }));
        return ExitCode.ok;
      }
    } else {
      selection = await selectForChange({
        config,
        repo: options.repo ?? ctx.cwd,
        base: options.base!,
        head: options.head ?? 'HEAD',
        configReads: store.configReads,
        nowMs: Date.now(),
      });
      const stage = options.stage ?? 'diff';
      // The arms deploy what the change compares: base as control, head as treatment.
      const flags = {
        ...options,
        stage,
        change: selection.head,
        controlRevision: options.controlRevision ?? selection.base,
        treatmentRevision: options.treatmentRevision ?? selection.head,
      };
      // Each experiment keeps why it was selected, for `tandem serve`'s change page; the skipped list is capped.
      const skipped = selection.skipped.slice(0, 200).map((x) => ({ workload: x.workload, reason: x.reason }));
      for (const s of selection.selected) {
        const { id, deduplicated } = await queue.submit(requestFromFlags(s.workload, selection.config, flags), { rerun: options.rerun === true });
        ids.push(id);
        // A retry that found the experiment already submitted finds its reasons stored too.
        if (!deduplicated)
          await store.experiments.appendEvent({
            experimentId: id,
            timeMs: Date.now(),
            type: 'selected',
            message: s.reasons.map((r) => r.message).join('; '),
            data: { base: selection.base, head: selection.head, reasons: s.reasons, skipped },
          });
      }
      for (const d of selection.deferred) {
        // Recorded, never silently dropped: a deferred workload is an experiment that did not run, with why.
        const request = parseRequest({ workload: d.workload, stage, change: selection.head });
        const { record, created } = await createQueued(store, await attemptIdFor(store, request, Date.now(), { deferring: true }), request, systemClock);
        deferredRecords.push(created ? await transition(store, record, 'deferred', systemClock, {}, d.reason.message) : record);
      }
    }
    const wait = options.wait === true || queue instanceof InlineQueue;
    if (queue instanceof InlineQueue) await queue.idle();
    const timeoutMs = 6 * 3_600_000;
    const records = wait
      ? await waitAll(store, ids, Date.now() + timeoutMs, ctx.signal, (line) => ctx.err(line))
      : ((await Promise.all(ids.map((id) => store.experiments.get(id)))).filter(Boolean) as ExperimentRecord[]);
    const all = [...records, ...deferredRecords];
    // The selection without its expanded config (which may hold credentials).
    const shown = selection ? (({ config: _config, ...rest }) => rest)(selection) : undefined;
    if (options.json)
      ctx.out(
        JSON.stringify({
          ...(shown ? { selection: shown } : {}),
          experiments: all.map(({ id, workload, status, reason }) => ({ id, workload, status, ...(reason ? { reason } : {}) })),
        }),
      );
    else
      ctx.out(
        wait
          ? `${summary(all, selection)}${(await experimentDetails(records, selection?.config ?? config, store, ctx.cwd)).join('\n')}`
          : summary(all, selection),
      );
    return wait ? exitCodeForRecords(records) : ExitCode.ok;
  } finally {
    await queue.close();
    await store.close();
  }
}
