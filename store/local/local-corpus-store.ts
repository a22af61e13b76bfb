/**
 * Corpus files: `corpus/<tier>/<YYYYMMDDHH>.ndjson`, one file per UTC hour of
 * record time, so lookback reads skip whole files and prune deletes them.
 * Within an hour records are in append order: sorting would need the whole
 * hour in memory, and replay needs a stable order, not an exact one.
 *
 * Prune never rewrites a file a recorder may be appending to (another process:
 * the in-process mutex cannot see it, and a rewrite would lose what it appends
 * meanwhile). Whole hours before the cutoff are moved aside and deleted; in the
 * boundary hour, the cutoff is stored as the tier's watermark
 * (`pruned-before.json`) and reads skip records older than it. The boundary
 * file's old bytes go with the file once its whole hour is before a cutoff.
 */
import { readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError, type CorpusRecord } from '../../core/index.js';
import type { CorpusStore, CorpusTierSummary, ReadOptions } from '../store.js';
import { isCorpusRecord } from '../record-guards.js';
import { assertName, assertRecordTime } from '../names.js';
import { appendLines, fileMutex, readJsonLines } from './ndjson-file.js';
import { writeFileAtomic } from './atomic-file.js';
import type { LocalFiles } from './local-files.js';

const HOUR_MS = 3_600_000;
const BUCKET_FILE = /^(\d{10})\.ndjson$/;
const WATERMARK_FILE = 'pruned-before.json';

let lastBucket = { hour: Number.NaN, name: '' };

/** The hour's file name; consecutive records share an hour, so the last one is remembered. */
function bucketName(timeMs: number): string {
  const hour = Math.floor(timeMs / HOUR_MS);
  if (hour === lastBucket.hour) return lastBucket.name;
  lastBucket = { hour, name: formatBucket(timeMs) };
  return lastBucket.name;
}

function formatBucket(timeMs: number): string {
  const d = new Date(Math.floor(timeMs / HOUR_MS) * HOUR_MS);
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}${pad(d.getUTCHours())}`;
}

function bucketStartMs(name: string): number {
  return Date.UTC(Number(name.slice(0, 4)), Number(name.slice(4, 6)) - 1, Number(name.slice(6, 8)), Number(name.slice(8, 10)));
}

export class LocalCorpusStore implements CorpusStore {
  readonly #files: LocalFiles;

  constructor(files: LocalFiles) {
    this.#files = files;
  }

  async append(records: readonly CorpusRecord[]): Promise<void> {
    // Records of one batch nearly always share a tier and an hour: the file's lines are found by
    // tier and bucket name, and a path is joined and a tier name checked once per batch, not per record.
    const byFile = new Map<string, string[]>();
    let lastKey = '';
    let lastLines: string[] = [];
    for (const record of records) {
      assertRecordTime(record.timeMs, `corpus record ${record.id} time`);
      const key = `${record.tier}/${bucketName(record.timeMs)}`;
      if (key !== lastKey) {
        let lines = byFile.get(key);
        if (!lines) {
          assertName(record.tier, 'corpus record tier');
          byFile.set(key, (lines = []));
        }
        lastKey = key;
        lastLines = lines;
      }
      lastLines.push(JSON.stringify(record));
    }
    for (const [key, lines] of byFile) {
      const path = join(this.#files.dir, 'corpus', `${key}.ndjson`);
      await this.#files.guard(`append to ${path}`, async () => {
        await this.#files.ensureDir(join(path, '..'));
        await appendLines(path, lines);
      });
    }
  }

  async *read(tier: string, options: ReadOptions & { sinceMs: number; untilMs?: number; limit?: number }): AsyncIterable<CorpusRecord> {
    assertName(tier, 'tier');
    const until = options.untilMs ?? Number.POSITIVE_INFINITY;
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    if (limit <= 0) return;
    let yielded = 0;
    const since = Math.max(options.sinceMs, await this.#watermark(tier));
    for (const bucket of await this.#buckets(tier)) {
      if (bucket.startMs + HOUR_MS <= since || bucket.startMs >= until) continue;
      for await (const record of readJsonLines(bucket.path, isCorpusRecord, options)) {
        if (record.timeMs < since || record.timeMs >= until || record.tier !== tier) continue;
        yield record;
        if (++yielded >= limit) return;
      }
    }
  }

  async tiers(options: ReadOptions = {}): Promise<CorpusTierSummary[]> {
    const summaries: CorpusTierSummary[] = [];
    for (const tier of await this.#files.list('corpus')) {
      let count = 0;
      let firstMs = Number.POSITIVE_INFINITY;
      let lastMs = Number.NEGATIVE_INFINITY;
      let bytes = 0;
      const watermark = await this.#watermark(tier);
      for (const bucket of await this.#buckets(tier)) {
        bytes += (await stat(bucket.path)).size;
        for await (const record of readJsonLines(bucket.path, isCorpusRecord, options)) {
          if (record.timeMs < watermark) continue;
          count++;
          firstMs = Math.min(firstMs, record.timeMs);
          lastMs = Math.max(lastMs, record.timeMs);
        }
      }
      if (count > 0) summaries.push({ tier, count, firstMs, lastMs, bytes });
    }
    return summaries;
  }

  async prune(beforeMs: number, tier?: string): Promise<number> {
    const tiers = tier === undefined ? await this.#files.list('corpus') : [assertName(tier, 'tier')];
    let deleted = 0;
    for (const name of tiers) {
      const buckets = await this.#buckets(name);
      if (buckets.length === 0) continue;
      const watermark = await this.#watermark(name);
      for (const bucket of buckets) {
        if (bucket.startMs >= beforeMs) continue;
        deleted += await fileMutex.run(bucket.path, () =>
          this.#files.guard(`prune ${bucket.path}`, () =>
            bucket.startMs + HOUR_MS <= beforeMs ? this.#dropFile(bucket.path, watermark) : this.#countBetween(bucket.path, watermark, beforeMs),
          ),
        );
      }
      if (beforeMs > watermark)
        await this.#files.guard(`store the prune watermark of tier ${name}`, () => writeFileAtomic(this.#watermarkPath(name), JSON.stringify({ beforeMs })));
    }
    return deleted;
  }

  /** Move the file aside (atomic: a recorder appending now starts a new file) and count what it held above the old watermark. */
  async #dropFile(path: string, watermark: number): Promise<number> {
    const aside = `${path}.pruning`;
    await rename(path, aside);
    const count = await this.#countBetween(aside, watermark, Number.POSITIVE_INFINITY);
    await rm(aside, { force: true });
    return count;
  }

  async #countBetween(path: string, fromMs: number, beforeMs: number): Promise<number> {
    let count = 0;
    for await (const record of readJsonLines(path, isCorpusRecord)) if (record.timeMs >= fromMs && record.timeMs < beforeMs) count++;
    return count;
  }

  #watermarkPath(tier: string): string {
    return join(this.#files.dir, 'corpus', tier, WATERMARK_FILE);
  }

  /** Records of the tier older than this were pruned. */
  async #watermark(tier: string): Promise<number> {
    let text: string;
    try {
      text = await readFile(this.#watermarkPath(tier), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw this.#files.wrap(`read the prune watermark of tier ${tier}`, error);
    }
    let beforeMs: unknown;
    try {
      beforeMs = (JSON.parse(text) as { beforeMs?: unknown } | null)?.beforeMs;
    } catch {
      beforeMs = undefined;
    }
    if (typeof beforeMs !== 'number' || !Number.isFinite(beforeMs))
      throw new StoreError(`local store: ${this.#watermarkPath(tier)} is not a prune watermark ({"beforeMs": <epoch ms>})`);
    return beforeMs;
  }

  async #buckets(tier: string): Promise<{ path: string; startMs: number }[]> {
    const names = await this.#files.list(join('corpus', tier));
    return names
      .filter((name) => BUCKET_FILE.test(name))
      .sort()
      .map((name) => ({ path: join(this.#files.dir, 'corpus', tier, name), startMs: bucketStartMs(name) }));
  }
}
