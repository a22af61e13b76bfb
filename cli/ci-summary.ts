/**
 * The per-experiment part of `submit`'s CI summary: for each experiment that ended, its judged metrics and
 * top response differences (harness/reports/summary-markdown.ts), and its full HTML report written to
 * `tandem-reports/<id>.html` beside the command, for a CI job to keep as an artifact.
 */
import { mkdir } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import type { ExperimentRecord, TandemConfig } from '../core/index.js';
import { writeFileAtomic, type Store } from '../store/index.js';
import { isTerminal, latestCalibration } from '../executor/index.js';
import { evaluateExperiment, loadGrpcSchema, renderHtml, renderSummaryMarkdown } from '../harness/index.js';

export const CI_REPORTS_DIR = 'tandem-reports';

export async function experimentDetails(records: readonly ExperimentRecord[], config: TandemConfig, store: Store, cwd: string): Promise<string[]> {
  const dir = resolve(cwd, CI_REPORTS_DIR);
  const lines: string[] = [];
  for (const record of records) {
    if (record.spec.kind !== 'experiment' || !isTerminal(record.status) || record.status === 'deferred') continue;
    const workload = config.workloads.find((w) => w.name === record.workload);
    if (!workload) continue;
    const calibration = await latestCalibration(store, record.workload);
    const grpcSchema = workload.harness.responses?.grpc !== undefined ? await loadGrpcSchema(workload.harness.responses.grpc, cwd) : undefined;
    const report = await evaluateExperiment(store, record.id, { workload, ...(calibration ? { calibration } : {}), ...(grpcSchema ? { grpcSchema } : {}) });
    await mkdir(dir, { recursive: true });
    const path = join(dir, `${record.id}.html`);
    await writeFileAtomic(path, renderHtml(report));
    lines.push(...renderSummaryMarkdown(report, relative(cwd, path)));
  }
  return lines.length > 0 ? ['', '### Per experiment', '', ...lines] : [];
}
