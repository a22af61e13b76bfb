/**
 * Workload templates expanded per build target: one workload per package
 * without writing seventy of them. A workload written out under the same
 * name wins over the template's; two targets giving one name is an error
 * naming both, never one silently dropped.
 */
import picomatch from 'picomatch';
import { ConfigError } from '../errors.js';
import { formatPath } from './format-issues.js';
import { instantiateTemplate, targetSlug, workloadSchema, type TandemConfig, type WorkloadConfig } from './schema.js';

const SAFE_TARGET = /^[A-Za-z0-9@/._:+-]{1,214}$/;
const SAFE_DIR = /^[A-Za-z0-9@/._+-]{0,1024}$/;

/** `config` with its templates expanded for `targets` (name and root directory of each build target). */
export function expandWorkloadTemplates(config: TandemConfig, targets: readonly { readonly name: string; readonly dir: string }[]): TandemConfig {
  if (config.workloadTemplates.length === 0) return config;
  const written = new Set(config.workloads.map((w) => w.name));
  const made = new Map<string, { workload: WorkloadConfig; from: string }>();
  const problems: string[] = [];
  config.workloadTemplates.forEach((template, i) => {
    const matches = picomatch(template.targets);
    for (const target of targets) {
      if (!matches(target.name)) continue;
      // Target names and directories come from the repository (a pull request's package.json): substituted into
      // deploy commands that a shell runs, so only characters no shell interprets are accepted.
      if (!SAFE_TARGET.test(target.name) || !SAFE_DIR.test(target.dir)) {
        problems.push(
          `workloadTemplates[${i}]: target ${JSON.stringify(target.name)} (directory ${JSON.stringify(target.dir)}) has characters that are not safe to substitute into a command (allowed: letters, digits, @ / . _ : + -)`,
        );
        continue;
      }
      const parsed = workloadSchema.safeParse(instantiateTemplate(template.workload, target));
      if (!parsed.success) {
        for (const issue of parsed.error.issues)
          problems.push(
            `${formatPath(['workloadTemplates', i, 'workload', ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))])} (for target ${target.name}): ${issue.message}`,
          );
        continue;
      }
      const w = parsed.data;
      if (written.has(w.name)) continue;
      const earlier = made.get(w.name);
      if (earlier)
        problems.push(
          `workloadTemplates[${i}] gives the name ${JSON.stringify(w.name)} to targets ${earlier.from} and ${target.name}: name the workloads "{slug}" (the whole target name as a workload name: ${targetSlug(earlier.from)}, ${targetSlug(target.name)})`,
        );
      else made.set(w.name, { workload: w, from: target.name });
    }
  });
  if (problems.length > 0) throw new ConfigError(problems, 'config');
  return { ...config, workloads: [...config.workloads, ...[...made.values()].map((m) => m.workload)] };
}

/**
 * Build targets no workload covers, when the config has templates: neither a template's globs nor a written
 * workload's `triggers.targets` name them, so a change to them selects nothing, silently. (`*` stops at `/`:
 * `targets: ["*"]` leaves out every scoped package.)
 */
export function targetsWithoutWorkload(config: TandemConfig, targets: readonly { readonly name: string }[]): string[] {
  if (config.workloadTemplates.length === 0) return [];
  const matchers = config.workloadTemplates.map((t) => picomatch(t.targets));
  const written = new Set(config.workloads.flatMap((w) => w.triggers.targets));
  return targets.map((t) => t.name).filter((name) => !written.has(name) && !matchers.some((matches) => matches(name)));
}

/** The warning for targetsWithoutWorkload, or undefined when every target is covered. */
export function uncoveredTargetsWarning(uncovered: readonly string[], total: number): string | undefined {
  if (uncovered.length === 0) return undefined;
  const scoped = uncovered.some((name) => name.includes('/'));
  return `warning: ${uncovered.length} of ${total} build targets match no workload template and no workload: ${uncovered.slice(0, 10).join(', ')}${uncovered.length > 10 ? ', …' : ''}${scoped ? ' (a glob\'s `*` stops at `/`: "@*/*" or "**" matches scoped names)' : ''}`;
}
