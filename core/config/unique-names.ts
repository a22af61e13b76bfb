/**
 * Names that must be unique (workloads, lattices; dependencies and detectors
 * within a workload). Checked on the raw input, not as a schema refinement, because
 * refinements do not run while any other issue exists, and a user fixing a
 * config wants every problem in one pass.
 */
import type { FormattedIssue } from './format-issues.js';
import { formatPath } from './format-issues.js';

function namesOf(list: unknown): [number, string][] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((item, i): [number, string][] =>
    item !== null && typeof item === 'object' && typeof (item as { name?: unknown }).name === 'string' ? [[i, (item as { name: string }).name]] : [],
  );
}

function duplicates(list: unknown, path: (string | number)[]): FormattedIssue[] {
  const seen = new Map<string, number>();
  const issues: FormattedIssue[] = [];
  for (const [i, name] of namesOf(list)) {
    const first = seen.get(name);
    if (first === undefined) {
      seen.set(name, i);
      continue;
    }
    const at = [...path, i, 'name'];
    issues.push({ path: at, text: `${formatPath(at)} must be unique, got ${JSON.stringify(name)} (also used by ${formatPath([...path, first])})` });
  }
  return issues;
}

export function duplicateNameIssues(raw: unknown): FormattedIssue[] {
  if (raw === null || typeof raw !== 'object') return [];
  const workloads = (raw as { workloads?: unknown }).workloads;
  const issues = [...duplicates(workloads, ['workloads']), ...duplicates((raw as { lattices?: unknown }).lattices, ['lattices'])];
  if (Array.isArray(workloads)) {
    workloads.forEach((workload: unknown, i) => {
      if (workload === null || typeof workload !== 'object') return;
      issues.push(...duplicates((workload as { dependencies?: unknown }).dependencies, ['workloads', i, 'dependencies']));
      issues.push(...duplicates((workload as { detectors?: unknown }).detectors, ['workloads', i, 'detectors']));
    });
  }
  return issues;
}
