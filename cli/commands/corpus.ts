/** `tandem corpus ls|show|import|export|prune`: look after recorded corpora. */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { InputError, UsageError, errorMessage, formatDuration, type CorpusRecord } from '../../core/index.js';
import { assertName, createStore, type Store } from '../../store/index.js';
import { Redactor, parseGor, parseHar, rulesForTier, type ParsedImport } from '../../recorder/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { parseDurationFlag, parsePositiveInteger } from '../arguments.js';
import { columns, terminalSafe } from '../terminal-text.js';
import { writePrivateLines } from '../private-output.js';
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
      for (const line of columns(
        ['tier', 'records', 'first', 'last', 'bytes'],
        tiers.map((t) => [t.tier, String(t.count), iso(t.firstMs), iso(t.lastMs), String(t.bytes)]),
        new Set([1, 4]),
      ))
        ctx.out(line);
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
      ctx.out(terminalSafe(`${iso(record.timeMs)}  ${record.method} ${record.path}  (${record.id}, ${record.sampleMode} at ${record.sampleRate})`));
      for (const [header, value] of Object.entries(record.headers)) ctx.out(terminalSafe(`  ${header}: ${value}`));
      if (record.bodyWithheld === true) ctx.out('  [body withheld: it could not be parsed for redaction]');
      else if (record.bodyTruncated) ctx.out('  [body over the size limit: not stored]');
      else if (body.length > 0) ctx.out(`  ${terminalSafe(body.toString('utf8', 0, Math.min(body.length, 400)))}${body.length > 400 ? ' …' : ''}`);
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
    const parse = {
      tier,
      redactor: new Redactor(rulesForTier(config.recorder.redact, tier), { maxDecodedBytes: config.recorder.maxBodyBytes }),
      maxBodyBytes: config.recorder.maxBodyBytes,
    };
    let parsed: ParsedImport;
    try {
      parsed = format === 'har' ? parseHar(data.toString('utf8'), parse) : parseGor(data, parse);
    } catch (error) {
      throw new InputError(`${file}: ${errorMessage(error)}`);
    }
    // Ids from the file's content and the entry's place in it: importing the same file again finds its records.
    const digest = createHash('sha256').update(data).digest('hex').slice(0, 16);
    let records: CorpusRecord[] = parsed.records.map((r, i) => ({ ...r, id: `import-${digest}-${i}` }));
    if (options.rebase && records.length > 0) {
      // A loop, not Math.max(...): spreading 130k arguments overflows the call stack.
      const newest = records.reduce((max, r) => Math.max(max, r.timeMs), Number.NEGATIVE_INFINITY);
      const shift = Date.now() - newest;
      records = records.map((r) => ({ ...r, timeMs: r.timeMs + shift }));
    }
    await store.init();
    // Idempotent rather than transactional: a store can fail after writing some hours of an import (no
    // store here has multi-file transactions), so a re-run writes only what is not there yet.
    const present = await importedIds(store, tier, `import-${digest}-`);
    const fresh = records.filter((r) => !present.has(r.id));
    await store.corpus.append(fresh);
    const already = records.length - fresh.length;
    if (options.json) ctx.out(JSON.stringify({ imported: fresh.length, alreadyPresent: already, skipped: parsed.skipped }));
    else
      ctx.out(
        `imported ${fresh.length} request(s) into tier ${tier} from ${file}${already > 0 ? ` (${already} already imported from this file)` : ''}${parsed.skipped.length > 0 ? `; skipped ${parsed.skipped.length}:` : ''}`,
      );
    if (!options.json) for (const skip of parsed.skipped) ctx.err(`  ${file} ${skip.where}: ${skip.reason}`);
    return ExitCode.ok;
  });
}

/** Ids of records an earlier import of the same file wrote to the tier. */
async function importedIds(store: Store, tier: string, prefix: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const record of store.corpus.read(tier, { sinceMs: 0 })) if (record.id.startsWith(prefix)) ids.add(record.id);
  return ids;
}

export interface ExportOptions extends GlobalOptions {
  readonly since?: string;
  readonly out?: string;
}

export async function exportTier(tier: string, options: ExportOptions, ctx: CliContext): Promise<number> {
  const name = tierArgument(tier, 'tier');
  const sinceMs = options.since !== undefined ? Date.now() - parseDurationFlag(options.since, '--since') : 0;
  return withStore(options, ctx, async (store) => {
    // Streamed: a tier can be larger than one string may be.
    const lines = (async function* () {
      for await (const record of store.corpus.read(name, { sinceMs })) yield JSON.stringify(record);
    })();
    if (options.out !== undefined) {
      const count = await writePrivateLines(resolve(ctx.cwd, options.out), lines);
      ctx.err(`exported ${count} record(s) of tier ${name} to ${options.out}`);
    } else {
      for await (const line of lines) ctx.out(line);
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
