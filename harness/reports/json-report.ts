/** The JSON report: the report model as is, with non-finite numbers as null (JSON has no NaN). */
import type { ExperimentReport } from '../checks/evaluate.js';

export function renderJson(report: ExperimentReport): string {
  return JSON.stringify(report, (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? null : value), 2);
}
