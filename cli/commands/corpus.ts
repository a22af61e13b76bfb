/** `tandem corpus ls|show|import|export|prune`: look after recorded corpora. */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { InputError, UsageError, errorMessage, formatDuration, type CorpusRecord } from '../../core/index.js';
import { assertName, createStore, type Store } from '../../store/index.js';
import { Redactor, parseGor, parseHar, type ParsedImport } from '../../recorder/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { parseDurationFlag, parsePositiveInteger } from '../arguments.js';
import type { TandemConfig } from '../../core/index.js';

async function withStore<T>(options: GlobalOptions, ctx: CliContext, work: (store: Store, config: TandemConfig) => Promise<T>): Promise<T> {
  const { config } = await loadCommandConfig(options, ctx);
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  try {
    return await work(store, config);
  } finally {
    await store.close();
  }
}

function tierArgument(tier: string, flag: string): string {
  try {
    return assertName(tier, flag);
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
}

const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

export async function ls(options: GlobalOptions, ctx: CliContext): Promise<number> {
  return withStore(options, ctx, async (store) => {
    let corrupt = 0;
    const tiers = await store.corpus.tiers({ onCorrupt: () => corrupt++ });
    if (options.json) ctx.out(JSON.stringify({ tiers, corruptLines: corrupt }));
    else if (tiers.length === 0) ctx.out(`no recorded requests in ${store.location}`);
    else {
      ctx.out('tier                 records  first                 last                  bytes');
      for (const t of tiers) ctx.out(`${t.tier.padEnd(20)} ${String(t.count).padStart(8)}  ${iso(t.firstMs)}  ${iso(t.lastMs)}  ${t.bytes}`);
    }
    if (corrupt > 0) ctx.err(`skipped ${corrupt} unreadable line(s) (a writer was killed mid-line?)`);
    return ExitCode.ok;
  });
}

export interface ShowOptions extends GlobalOptions {
  readonly since?: string;
  readonly limit?: string;
}

export async function show(tier: string, options: ShowOptions, ctx: CliContext): Promise<number> {
  const name = tierArgument(tier, 'tier');
  const sinceMs = options.since !== undefined ? Date.now() - parseDurationFlag(options.since, '--since') : 0;
  const limit = options.limit !== undefined ? parsePositiveInteger(options.limit, '--limit') : 10;
  return withStore(options, ctx, async (store) => {
    for await (const record of store.corpus.read(name, { sinceMs, limit })) {
      if (options.json) {
        ctx.out(JSON.stringify(record));
        continue;
      }
      const body = Buffer.from(record.body, 'base64');
      ctx.out(`${iso(record.timeMs)}  ${record.method} ${record.path}  (${record.id}, ${record.sampleMode} at ${record.sampleRate})`);
      for (const [header, value] of Object.entries(record.headers)) ctx.out(`  ${header}: ${value}`);
      if (record.bodyTruncated) ctx.out('  [body over the size limit: not stored]');
      else if (body.length > 0) ctx.out(`  ${body.toString('utf8', 0, Math.min(body.length, 400)).replace(/[^\x20-\x7e\u00a0-\uffff]/g, '.')}${body.length > 400 ? ' …' : ''}`);
    }
    return ExitCode.ok;
  });
}

export interface ImportOptions extends GlobalOptions {
  readonly tier: string;
  readonly format?: string;
  /** Shift times so the newest imported request is now, keeping the spacing. */
  readonly rebase?: boolean;
}

export async function importFile(file: string, options: ImportOptions, ctx: CliContext): Promise<number> {
  const tier = tierArgument(options.tier, '--tier');
  const format = options.format ?? (file.endsWith('.har') ? 'har' : file.endsWith('.gor') ? 'gor' : undefined);
  if (format !== 'har' && format !== 'gor') throw new UsageError(`--format must be har or gor (could not tell from the name ${JSON.stringify(file)})`);
  let data: Buffer;
  try {
    data = await readFile(resolve(ctx.cwd, file));
  } catch (error) {
    throw new InputError(`cannot read ${file}: ${errorMessage(error)}`);
  }
  return withStore(options, ctx, async (store, config) => {
    const parse = { tier, redactor: new Redactor(config.recorder.redact), maxBodyBytes: config.recorder.maxBodyBytes };
    let parsed: ParsedImport;
    try {
      parsed = format === 'har' ? parseHar(data.toString('utf8'), parse) : parseGor(data, parse);
    } catch (error) {
      throw new InputError(`${file}: ${errorMessage(error)}`);
    }
    let records: CorpusRecord[] = parsed.records;
    if (options.rebase && records.length > 0) {
      const shift = Date.now() - Math.max(...records.map((r) => r.timeMs));
      records = records.map((r) => ({ ...r, timeMs: r.timeMs + shift }));
    }
    await store.init();
    await store.corpus.append(records);
    if (options.json) ctx.out(JSON.stringify({ imported: records.length, skipped: parsed.skipped }));
    else ctx.out(`imported ${records.length} request(s) into tier ${tier} from ${file}${parsed.skipped.length > 0 ? `; skipped ${parsed.skipped.length}:` : ''}`);
    if (!options.json) for (const skip of parsed.skipped) ctx.err(`  ${file} ${skip.where}: ${skip.reason}`);
    return ExitCode.ok;
  });
}

export interface ExportOptions extends GlobalOptions {
  readonly since?: string;
  readonly out?: string;
}

export async function exportTier(tier: string, options: ExportOptions, ctx: CliContext): Promise<number> {
  const name = tierArgument(tier, 'tier');
  const sinceMs = options.since !== undefined ? Date.now() - parseDurationFlag(options.since, '--since') : 0;
  return withStore(options, ctx, async (store) => {
    const lines: string[] = [];
    for await (const record of store.corpus.read(name, { sinceMs })) lines.push(JSON.stringify(record));
    const text = lines.length > 0 ? `${lines.join('\n')}\n` : '';
    if (options.out !== undefined) {
      // Recorded requests are private: the export is readable by its owner only, like the store.
      await writeFile(resolve(ctx.cwd, options.out), text, { mode: 0o600 });
      ctx.err(`exported ${lines.length} record(s) of tier ${name} to ${options.out}`);
    } else if (text !== '') {
      ctx.out(text.slice(0, -1));
    }
    return ExitCode.ok;
  });
}

export interface PruneOptions extends GlobalOptions {
  readonly tier?: string;
  readonly olderThan?: string;
}

export async function prune(options: PruneOptions, ctx: CliContext): Promise<number> {
  const tier = options.tier !== undefined ? tierArgument(options.tier, '--tier') : undefined;
  return withStore(options, ctx, async (store, config) => {
    // Default: the longest lookback any workload uses, so pruning never removes what a replay would read.
    const longest = Math.max(4 * 3_600_000, ...config.workloads.map((w) => w.corpus.lookback));
    const olderThanMs = options.olderThan !== undefined ? parseDurationFlag(options.olderThan, '--older-than') : longest;
    const deleted = await store.corpus.prune(Date.now() - olderThanMs, tier);
    if (options.json) ctx.out(JSON.stringify({ deleted, olderThanMs }));
    else ctx.out(`deleted ${deleted} record(s) older than ${formatDuration(olderThanMs)}${tier ? ` from tier ${tier}` : ''}`);
    return ExitCode.ok;
  });
}
