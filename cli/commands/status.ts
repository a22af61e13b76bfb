/**
 * `tandem status [id]`: the newest experiments, or one experiment with its
 * trials, verdict and lifecycle events.
 */
import { UsageError, type ExperimentRecord } from '../../core/index.js';
import { createStore } from '../../store/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { parsePositiveInteger } from '../arguments.js';
import { comparedText } from '../../harness/reports/compared-text.js';
import { oneLine } from '../terminal-text.js';

export interface StatusOptions extends GlobalOptions {
  readonly workload?: string;
  readonly limit?: string;
}

const line = (r: ExperimentRecord): string =>
  `${r.id.padEnd(34)} ${r.status.padEnd(10)} ${r.workload.padEnd(16)} ${String(r.spec.kind ?? '').padEnd(12)} ${String(r.spec.stage ?? '').padEnd(9)} ${new Date(r.createdAtMs).toISOString()}${r.reason ? `  ${oneLine(r.reason, 100)}` : ''}`;

export async function run(id: string | undefined, options: StatusOptions, ctx: CliContext): Promise<number> {
  // A status read from the defaults would look into a store nobody configured and say nothing: exit 3, naming the file.
  const { config } = await loadCommandConfig(options, ctx, true);
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  try {
    if (id === undefined) {
      const records = await store.experiments.list({
        ...(options.workload ? { workload: options.workload } : {}),
        limit: options.limit !== undefined ? parsePositiveInteger(options.limit, '--limit') : 20,
      });
      if (options.json)
        ctx.out(
          JSON.stringify(
            records.map(({ id: rid, status, workload, spec, createdAtMs, updatedAtMs, reason }) => ({
              id: rid,
              status,
              workload,
              kind: spec.kind,
              stage: spec.stage,
              ...(comparedText(spec) !== undefined ? { compared: comparedText(spec) } : {}),
              createdAtMs,
              updatedAtMs,
              ...(reason ? { reason } : {}),
            })),
          ),
        );
      else for (const r of records) ctx.out(line(r));
      return ExitCode.ok;
    }
    const record = await store.experiments.get(id);
    if (!record) throw new UsageError(`no experiment ${JSON.stringify(id)} in the store at ${store.location}`);
    const events = await store.experiments.events(id);
    if (options.json) ctx.out(JSON.stringify({ ...record, events }));
    else {
      ctx.out(line(record));
      const compared = comparedText(record.spec);
      if (compared !== undefined) ctx.out(`  compared: ${compared}`);
      for (const t of record.trials) ctx.out(`  trial ${t.index + 1} attempt ${t.attempt}: ${t.status}${t.reason ? ` (${t.reason})` : ''}`);
      if (record.verdict?.outcome !== undefined) ctx.out(`  verdict: ${String(record.verdict.outcome)}`);
      // Lease renewals are bookkeeping between runners (the claim and release say who ran it); progress is for live views.
      for (const e of events.filter((x) => x.type !== 'progress' && (x.type !== 'lease' || !String(x.message).startsWith('still'))))
        ctx.out(`  ${new Date(e.timeMs).toISOString()} ${e.type}${e.message ? ` ${e.message}` : ''}${e.data?.reason ? ` (${String(e.data.reason)})` : ''}`);
    }
    return ExitCode.ok;
  } finally {
    await store.close();
  }
}
