/**
 * `tandem fuzz --workload W --url URL`: single-SUT mode. Corpus records of
 * the workload, mutated, sent to one instance; 5xx answers, dropped
 * connections (crashes), timeouts and violated properties are findings.
 * Bounded by --max-requests and --duration. Exit 1 when anything was found.
 */
import { readCorpusWindow } from '../../recorder/index.js';
import { createStore } from '../../store/index.js';
import { InputError, type CorpusRecord } from '../../core/index.js';
import { fuzz, loadChecksModule } from '../../harness/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { parsePositiveInteger, parseTimerDurationFlag } from '../arguments.js';
import { findWorkload, httpUrl } from './replay.js';

export interface FuzzCommandOptions extends GlobalOptions {
  readonly workload: string;
  readonly url: string;
  readonly maxRequests?: string;
  readonly duration?: string;
  readonly seed?: string;
  readonly concurrency?: string;
  readonly healthPath?: string;
}

/** Records held in memory for mutation: a sample of the corpus window is enough to reach every shape. */
const MAX_SEED_RECORDS = 2_000;

export async function run(options: FuzzCommandOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx);
  const workload = findWorkload(config, options.workload);
  const url = httpUrl(options.url, '--url');
  const maxRequests = options.maxRequests !== undefined ? parsePositiveInteger(options.maxRequests, '--max-requests') : 500;
  const maxDurationMs = options.duration !== undefined ? parseTimerDurationFlag(options.duration, '--duration') : 60_000;
  const seed = options.seed !== undefined ? parsePositiveInteger(options.seed, '--seed') : 1;
  const concurrency = options.concurrency !== undefined ? parsePositiveInteger(options.concurrency, '--concurrency') : 8;
  const checks = workload.harness.checksModule !== undefined ? await loadChecksModule(workload.harness.checksModule, ctx.cwd) : undefined;
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  try {
    const tier = workload.corpus.tier ?? workload.tier;
    const records: CorpusRecord[] = [];
    for await (const r of readCorpusWindow(store.corpus, { tier, lookbackMs: workload.corpus.lookback, nowMs: Date.now(), limit: MAX_SEED_RECORDS }))
      records.push(r);
    if (records.length === 0)
      throw new InputError(`no recorded requests of tier ${tier} to mutate: record some with \`tandem record\` or \`tandem corpus import\``);
    ctx.err(`fuzzing ${url} with mutations of ${records.length} ${tier} record(s): at most ${maxRequests} requests in ${maxDurationMs / 1000}s, seed ${seed}`);
    const report = await fuzz({
      url,
      records,
      seed,
      maxRequests,
      maxDurationMs,
      concurrency,
      ...(options.healthPath !== undefined ? { healthPath: options.healthPath } : {}),
      ...(checks?.properties ? { properties: checks.properties } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    const found = Object.values(report.findingsByKind).reduce((a, b) => a + b, 0);
    if (options.json) ctx.out(JSON.stringify(report));
    else {
      ctx.out(`sent ${report.sent} mutated request(s), stopped by ${report.stoppedBy}; SUT ${report.aliveAfter ? 'still answers' : 'NO LONGER ANSWERS'}`);
      ctx.out(
        `  statuses: ${Object.entries(report.byStatus)
          .map(([s, n]) => `${s} ×${n}`)
          .join(', ')}`,
      );
      ctx.out(
        `  findings: ${Object.entries(report.findingsByKind)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}`,
      );
      for (const f of report.findings.slice(0, 20))
        ctx.out(
          `  - ${f.kind} after ${f.mutation} of record ${f.recordId}: ${f.request.method} ${f.request.path.slice(0, 120)} -> ${f.status || 'no response'}: ${f.message.slice(0, 200)}`,
        );
    }
    return found > 0 || !report.aliveAfter ? ExitCode.regression : ExitCode.ok;
  } finally {
    await store.close();
  }
}
