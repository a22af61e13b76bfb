/**
 * `tandem affected --base REV --head REV [--json]`: the workloads a change
 * selects, each with why (the shortest path from a changed file to its
 * target, a global input, a config setting its service read), and the ones
 * skipped or deferred with the reason. Human output groups workloads under
 * their reason, so a change reaching seventy workloads reads as one line of
 * cause and a list of names; `--json` has every reason, structured. A base
 * that does not exist is exit 3.
 */
import { createStore } from '../../store/index.js';
import { reasonGroup, selectForChange, type ChangeSelection, type Reason } from '../../triggers/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';

export interface AffectedOptions extends GlobalOptions {
  readonly base: string;
  readonly head?: string;
  readonly repo?: string;
}

export async function run(options: AffectedOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx, true);
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  try {
    const selection = await selectForChange({
      config,
      repo: options.repo ?? ctx.cwd,
      base: options.base,
      head: options.head ?? 'HEAD',
      configReads: store.configReads,
      nowMs: Date.now(),
    });
    if (options.json) {
      const { config: _expanded, ...rest } = selection;
      ctx.out(JSON.stringify(rest));
    } else for (const line of humanSelection(selection)) ctx.out(line);
    return ExitCode.ok;
  } finally {
    await store.close();
  }
}

/** One workload's entry in a group: its name, and the path when the group's cause reached it through others. */
function member(workload: string, reason: Reason): string {
  if (reason.kind !== 'graph' || !reason.path || reason.path.length <= 2) return workload;
  const via = reason.path.slice(1).map((target, i) => (i > 0 && reason.edges?.[i - 1] !== 'dependency' ? `${target} [${reason.edges?.[i - 1]}]` : target));
  return `${workload} (via ${via.join(' → ')})`;
}

function grouped(title: string, entries: readonly { workload: string; reason: Reason; more: number }[]): string[] {
  if (entries.length === 0) return [];
  const groups = new Map<string, { heading: string; members: string[] }>();
  for (const { workload, reason, more } of entries) {
    const { key, heading } = reasonGroup(reason);
    const group = groups.get(key) ?? groups.set(key, { heading, members: [] }).get(key)!;
    group.members.push(`${member(workload, reason)}${more > 0 ? ` (+${more} more reason${more > 1 ? 's' : ''})` : ''}`);
  }
  const lines = [`${title} ${entries.length}:`];
  for (const { heading, members } of groups.values()) lines.push(`  ${heading} — ${members.length}:`, ...members.map((m) => `      ${m}`));
  return lines;
}

export function humanSelection(selection: ChangeSelection): string[] {
  const ignored =
    selection.ignoredFiles.length > 0
      ? `; ${selection.ignoredFiles.length} in ignored inputs (${[...new Set(selection.ignoredFiles.map((f) => f.inputSet))].join(', ')})`
      : '';
  const lines = [`${selection.changedFiles.length} changed file(s) between ${selection.base.slice(0, 12)} and ${selection.head.slice(0, 12)}${ignored}`];
  for (const note of selection.notes) lines.push(`note: ${note}`);
  lines.push(
    ...grouped(
      'selected',
      selection.selected.map((s) => ({ workload: s.workload, reason: s.reasons[0]!, more: s.reasons.length - 1 })),
    ),
  );
  lines.push(
    ...grouped(
      'deferred',
      selection.deferred.map((d) => ({ workload: d.workload, reason: d.reason, more: 0 })),
    ),
  );
  lines.push(
    ...grouped(
      'skipped',
      selection.skipped.map((s) => ({ workload: s.workload, reason: s.reason, more: 0 })),
    ),
  );
  for (const f of selection.ignoredFiles) lines.push(`ignored   ${f.file}: ${f.inputSet}${f.target ? ` of ${f.target}` : ' (owned by no target)'}`);
  return lines;
}
