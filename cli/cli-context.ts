/**
 * What a command needs from its surroundings, passed in so tests can call
 * commands directly and read what they printed.
 */
import { resolve } from 'node:path';
import type { LoadedConfig } from '../core/config/load.js';

export interface CliContext {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Data for the user (or for `--json` consumers). */
  out(text: string): void;
  /** Progress, warnings and errors. */
  err(text: string): void;
  /** Aborted on SIGINT or SIGTERM: long-running commands stop cleanly. */
  readonly signal?: AbortSignal;
}

/** Options every command accepts. */
export interface GlobalOptions {
  readonly config?: string;
  readonly json?: boolean;
  readonly verbose?: boolean;
}

export function processContext(): CliContext {
  const interrupted = new AbortController();
  const onSignal = (name: string): void => {
    // A second signal means "now": leave without cleanup.
    if (interrupted.signal.aborted) process.exit(130);
    interrupted.abort(new Error(`interrupted by ${name}`));
  };
  process.once('SIGINT', () => onSignal('SIGINT'));
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  // `tandem corpus show | head`: a reader that closed the pipe ends the output quietly (no EPIPE stack trace,
  // no exit code of its own); the command still finishes what it was doing.
  let stdoutClosed = false;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    stdoutClosed = true;
  });
  return {
    signal: interrupted.signal,
    cwd: process.cwd(),
    env: process.env,
    out: (text) => void (stdoutClosed || process.stdout.write(text.endsWith('\n') ? text : `${text}\n`)),
    err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  };
}

/**
 * Every command validates the config before doing anything else. Commands that
 * select or name workloads require a config file (`requireFile`): without one
 * there is nothing to select, and "0 workloads selected, exit 0" would turn a
 * CI job green that never ran.
 */
export async function loadCommandConfig(
  options: GlobalOptions,
  ctx: CliContext,
  requireFile = false,
  graph: 'for-templates' | 'always' = 'for-templates',
): Promise<LoadedConfig & { readonly graphTargets?: readonly { name: string; dir: string }[] }> {
  // Loaded when a command reads its config: the schema (zod) and YAML parser are not needed for --help.
  const [{ loadConfig }, { configureTransport }] = await Promise.all([import('../core/config/load.js'), import('../net/transport-limits.js')]);
  const loaded = await loadConfig({ path: options.config, cwd: ctx.cwd, requireFile });
  // Every session and body copy this process makes from here on takes the configured limits.
  configureTransport(loaded.config.transport);
  const source = loaded.config.triggers.graph;
  if (source === undefined || (graph === 'for-templates' && loaded.config.workloadTemplates.length === 0)) return loaded;
  // Templated workloads exist per build target: expanded over the graph at HEAD, so `run`, `worker`
  // and `status` know them by name as `affected` and `submit` do (they also expand at both ends of a change).
  const [{ loadGraphAtBothEnds }, { expandWorkloadTemplates, targetsWithoutWorkload, uncoveredTargetsWarning }] = await Promise.all([
    import('../triggers/graph-loaders.js'),
    import('../core/config/workload-templates.js'),
  ]);
  // The repository the command reads (`--repo`), not the directory it was started in.
  const repo = (options as { readonly repo?: string }).repo;
  const { graph: built } = await loadGraphAtBothEnds(source, repo !== undefined ? resolve(ctx.cwd, repo) : ctx.cwd, 'HEAD', 'HEAD');
  const targets = built.targets();
  const warning = uncoveredTargetsWarning(targetsWithoutWorkload(loaded.config, targets), targets.length);
  if (warning !== undefined) ctx.err(warning);
  return { ...loaded, config: expandWorkloadTemplates(loaded.config, targets), graphTargets: targets };
}
