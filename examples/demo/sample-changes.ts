/**
 * Step 4 of the demo: which workloads would three changes trigger? A small
 * git repository shaped like a serving monorepo (npm workspaces: ranking
 * depends on a shared model package, billing stands alone, a ranking config
 * file), one commit per change, and Tandem's selection for each: build-graph
 * reachability for source changes, the observed consumption index for the
 * config change (ranking reported reading `model.layers`).
 */
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { parseConfigText } from '../../core/index.js';
import type { ConfigReadStore } from '../../store/index.js';
import { selectForChange } from '../../triggers/index.js';

const run = promisify(execFile);

export interface SampleChangeResult {
  readonly change: string;
  readonly files: readonly string[];
  /** Selected workloads with the first reason for each. */
  readonly selected: readonly { readonly workload: string; readonly reason: string }[];
  readonly skipped: readonly { readonly workload: string; readonly reason: string }[];
}

const CONFIG = [
  'triggers:',
  '  graph: { kind: workspaces }',
  'workloads:',
  '  - { name: ranking, tier: ranking, triggers: { targets: ["@serving/ranking"], configFiles: ["config/*.yaml"] } }',
  '  - { name: billing, tier: billing, triggers: { targets: ["@serving/billing"] } }',
  '',
].join('\n');

const BASE: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'serving', private: true, workspaces: ['packages/*'] }, null, 2),
  'packages/model/package.json': JSON.stringify({ name: '@serving/model' }),
  'packages/model/index.js': 'export const layers = 4;\n',
  'packages/ranking/package.json': JSON.stringify({ name: '@serving/ranking', dependencies: { '@serving/model': '*' } }),
  'packages/ranking/index.js': "import { layers } from '@serving/model';\nexport const rank = (docs) => docs.slice(0, layers * 5);\n",
  'packages/billing/package.json': JSON.stringify({ name: '@serving/billing' }),
  'packages/billing/index.js': 'export const invoice = (n) => n * 2;\n',
  'config/ranking.yaml': 'model:\n  layers: 4\nlogging:\n  level: info\n',
};

const CHANGES: readonly { readonly change: string; readonly files: Record<string, string> }[] = [
  { change: 'shared model package: fewer layers', files: { 'packages/model/index.js': 'export const layers = 3;\n' } },
  { change: 'billing: rounding fix', files: { 'packages/billing/index.js': 'export const invoice = (n) => Math.round(n * 2);\n' } },
  { change: 'config: ranking model.layers 4 → 3', files: { 'config/ranking.yaml': 'model:\n  layers: 3\nlogging:\n  level: info\n' } },
];

async function write(dir: string, files: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await writeFile(join(dir, file), text);
  }
}

/** Build the repository under `dir` (replacing it) and select workloads for each sample change. */
export async function affectedForSampleChanges(options: { dir: string; configReads: ConfigReadStore; nowMs: number }): Promise<SampleChangeResult[]> {
  const { dir } = options;
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'tandem demo',
    GIT_AUTHOR_EMAIL: 'demo@tandem.invalid',
    GIT_COMMITTER_NAME: 'tandem demo',
    GIT_COMMITTER_EMAIL: 'demo@tandem.invalid',
  };
  const git = async (...args: string[]): Promise<string> => (await run('git', args, { cwd: dir, env })).stdout.trim();
  await git('init', '-q', '-b', 'main');
  await write(dir, { ...BASE, 'tandem.config.yaml': CONFIG });
  await git('add', '-A');
  await git('commit', '-q', '-m', 'serving monorepo');
  // What the consumption index would hold after ranking ran with the config-read reporter (FIRE §4).
  await options.configReads.append([{ service: 'ranking', file: 'config/ranking.yaml', setting: 'model.layers', timeMs: options.nowMs - 60_000 }]);
  const config = parseConfigText(CONFIG, join(dir, 'tandem.config.yaml'));
  const results: SampleChangeResult[] = [];
  for (const sample of CHANGES) {
    await write(dir, sample.files);
    await git('commit', '-q', '-am', sample.change);
    const selection = await selectForChange({ config, repo: dir, base: 'HEAD~1', head: 'HEAD', configReads: options.configReads, nowMs: options.nowMs });
    results.push({
      change: sample.change,
      files: selection.changedFiles,
      selected: selection.selected.map((s) => ({ workload: s.workload, reason: s.reasons[0]?.message ?? '' })),
      skipped: selection.skipped.map((s) => ({ workload: s.workload, reason: s.reason.message })),
    });
  }
  return results;
}
