/**
 * `tandem demo`: the whole platform on the example stack in one command
 * (examples/demo/run-demo.ts tells the story), on the embedded default, or
 * with `--store clickhouse --clickhouse-url URL --queue bullmq --redis-url URL`
 * on the real backends (a worker runs in this process unless `--no-worker`).
 * Progress goes to stderr as one live line per step; the summary table and
 * the report paths to stdout. Exit 0 when every step showed what it is meant
 * to show, 2 otherwise.
 */
import { mkdir } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { UsageError } from '../../core/index.js';
import { runDemo, type DemoResult } from '../../examples/demo/run-demo.js';
import type { DemoBackends } from '../../examples/demo/demo-project.js';
import { httpUrl } from '../../executor/index.js';
import { ExitCode } from '../exit-codes.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext, GlobalOptions } from '../cli-context.js';

export interface DemoOptions extends GlobalOptions {
  readonly dir?: string;
  readonly store?: string;
  readonly clickhouseUrl?: string;
  readonly queue?: string;
  readonly redisUrl?: string;
  /** commander's --no-worker */
  readonly worker?: boolean;
  readonly rate?: string;
  readonly only?: string;
}

/** `--only 1,3,5`: the steps to run, each 1–5, once. */
export function parseDemoSteps(text: string): ReadonlySet<number> {
  const steps = text.split(',').map((part) => part.trim());
  if (!steps.every((step) => /^[1-5]$/.test(step)) || new Set(steps).size !== steps.length)
    throw new UsageError(`--only must list steps from 1 to 5, each once, separated by commas (e.g. 1,3,5), got ${JSON.stringify(text)}`);
  return new Set(steps.map(Number));
}

/** Above this the recording, sized for the rate, would take half a minute. */
const MAX_DEMO_RATE = 100;

function backendsFrom(options: DemoOptions): DemoBackends {
  const store = options.store ?? 'local';
  const queue = options.queue ?? 'inline';
  if (store !== 'local' && store !== 'clickhouse') throw new UsageError(`--store must be local or clickhouse, got ${JSON.stringify(store)}`);
  if (queue !== 'inline' && queue !== 'bullmq') throw new UsageError(`--queue must be inline or bullmq, got ${JSON.stringify(queue)}`);
  if (options.clickhouseUrl !== undefined && store !== 'clickhouse') throw new UsageError('--clickhouse-url needs --store clickhouse');
  if (options.redisUrl !== undefined && queue !== 'bullmq') throw new UsageError('--redis-url needs --queue bullmq');
  if (options.redisUrl !== undefined && !/^rediss?:\/\/[^\s]+$/.test(options.redisUrl))
    throw new UsageError(`--redis-url must be a redis:// URL, got ${JSON.stringify(options.redisUrl)}`);
  return {
    store,
    queue,
    ...(options.clickhouseUrl !== undefined ? { clickhouseUrl: httpUrl(options.clickhouseUrl, '--clickhouse-url') } : {}),
    ...(options.redisUrl !== undefined ? { redisUrl: options.redisUrl } : {}),
  };
}

/** One live line per step on a terminal; plain lines (each new one once) otherwise. */
function progressPrinter(ctx: CliContext): { update: (event: { step: number; title: string; line?: string }) => void; end: () => void } {
  const tty = process.stderr.isTTY === true;
  let last = '';
  return {
    update({ step, title, line }) {
      const text = `[${step}/5] ${title}${line ? ` — ${line}` : ''}`;
      if (text === last) return;
      if (tty) process.stderr.write(`\r\x1b[K${text.slice(0, (process.stderr.columns ?? 120) - 1)}`);
      else ctx.err(text);
      last = text;
    },
    end() {
      if (tty && last !== '') process.stderr.write('\n');
    },
  };
}

/** The demo's directory as a person would type it from here. */
function relativeOrAbsolute(dir: string, cwd: string): string {
  const rel = relative(cwd, dir);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : dir;
}

export function printSummary(result: DemoResult, ctx: CliContext): void {
  ctx.out('');
  ctx.out(`${'  experiment'.padEnd(38)} ${'verdict'.padEnd(24)} key figure`);
  for (const s of result.steps) ctx.out(`${`${s.asExpected ? ' ' : '!'} ${s.step}. ${s.title}`.padEnd(38)} ${s.verdict.padEnd(24)} ${s.keyFigure}`);
  ctx.out('');
  ctx.out(`corpus: ${result.corpusRecords} recorded requests of tier ranking`);
  const cost = result.trials.rankingCpuMsPerRequest;
  const { loweredFrom } = result.trials;
  const lowered = loweredFrom
    ? `; lowered from ${loweredFrom.pairsPerSecond}, where the trials of ${loweredFrom.experimentId} achieved ${loweredFrom.achieved.map((r) => r.toFixed(1)).join(', ')}`
    : '';
  ctx.out(
    `trials: ${result.trials.pairsPerSecond} pairs/s (${result.trials.quiet ? 'quiet machine' : 'busy machine'}; a ranking request cost ${cost === undefined ? 'an unmeasured amount of' : `${cost.toFixed(1)} ms of`} CPU ${result.trials.probed ? 'in a probe after recording' : 'while recording'}${lowered})`,
  );
  ctx.out('reports:');
  for (const s of result.steps) if (s.reportPath) ctx.out(`  ${s.step}. ${s.reportPath}`);
  ctx.out(`config, store and reports: ${result.dir}`);
  ctx.out(`dashboard: npx tandem serve -c ${relativeOrAbsolute(result.dir, ctx.cwd)}/tandem.config.yaml   (then open http://127.0.0.1:8700/)`);
  if (!result.ok)
    ctx.out(
      `steps marked ! did not show what they are meant to: ${result.steps
        .filter((s) => !s.asExpected)
        .map((s) => s.step)
        .join(', ')}`,
    );
}

export async function run(options: DemoOptions, ctx: CliContext): Promise<number> {
  const backends = backendsFrom(options);
  const rate = options.rate === undefined ? undefined : parsePositiveInteger(options.rate, '--rate');
  const only = options.only === undefined ? undefined : parseDemoSteps(options.only);
  if (rate !== undefined && rate > MAX_DEMO_RATE)
    throw new UsageError(`--rate must be at most ${MAX_DEMO_RATE} pairs/s (the recording is sized for it), got ${rate}`);
  const dir = resolve(ctx.cwd, options.dir ?? '.tandem/demo');
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw new UsageError(`--dir: cannot create ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const printer = progressPrinter(ctx);
  let result: DemoResult;
  try {
    result = await runDemo({
      dir,
      backends,
      worker: options.worker ?? true,
      ...(rate !== undefined ? { rate } : {}),
      ...(only ? { only } : {}),
      onProgress: printer.update,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  } finally {
    printer.end();
  }
  if (options.json) ctx.out(JSON.stringify(result));
  else printSummary(result, ctx);
  return result.ok ? ExitCode.ok : ExitCode.failure;
}
