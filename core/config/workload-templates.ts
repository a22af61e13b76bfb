/**
 * Workload templates expanded per build target: one workload per package
 * without writing seventy of them. A workload written out under the same
 * name wins over the template's; two targets giving one name is an error
 * naming both, never one silently dropped.
 */
import picomatch from 'picomatch';
import { ConfigError } from '../errors.js';
import { formatPath } from './format-issues.js';
import { instantiateTemplate, workloadSchema, type TandemConfig, type WorkloadConfig } from './schema.js';

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
      const parsed = workloadSchema.safeParse(instantiateTemplate(template.workload, target));
      if (!parsed.success) {
        for (const issue of parsed.error.issues) problems.push(`${formatPath(['workloadTemplates', i, 'workload', ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))])} (for target ${target.name}): ${issue.message}`);
        continue;
      }
      const w = parsed.data;
      if (written.has(w.name)) continue;
      const earlier = made.get(w.name);
      if (earlier) problems.push(`workloadTemplates[${i}] gives the name ${JSON.stringify(w.name)} to targets ${earlier.from} and ${target.name}: use {target} or a longer pattern in the template's name`);
      else made.set(w.name, { workload: w, from: target.name });
    }
  });
  if (problems.length > 0) throw new ConfigError(problems, 'config');
  return { ...config, workloads: [...config.workloads, ...[...made.values()].map((m) => m.workload)] };
}
