/**
 * Corpus files: `corpus/<tier>/<YYYYMMDDHH>.ndjson`, one file per UTC hour of
 * record time, so lookback reads skip whole files and prune deletes them.
 * Within an hour records are in append order: sorting would need the whole
 * hour in memory, and replay needs a stable order, not an exact one.
 */
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { CorpusRecord } from '../../core/index.js';
import type { CorpusStore, CorpusTierSummary, ReadOptions } from '../store.js';
import { isCorpusRecord } from '../record-guards.js';
import { assertName } from '../names.js';
import { appendLines, fileMutex, readJsonLines } from './ndjson-file.js';
import { writeFileAtomic } from './atomic-file.js';
import type { LocalFiles } from './local-files.js';

const HOUR_MS = 3_600_000;
const BUCKET_FILE = /^(\d{10})\.ndjson$/;

function bucketName(timeMs: number): string {
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
    const byFile = new Map<string, string[]>();
    for (const record of records) {
      assertName(record.tier, 'corpus record tier');
      const path = join(this.#files.dir, 'corpus', record.tier, `${bucketName(record.timeMs)}.ndjson`);
      let lines = byFile.get(path);
      if (!lines) byFile.set(path, (lines = []));
      lines.push(JSON.stringify(record));
    }
    for (const [path, lines] of byFile) {
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
    for (const bucket of await this.#buckets(tier)) {
      if (bucket.startMs + HOUR_MS <= options.sinceMs || bucket.startMs >= until) continue;
      for await (const record of readJsonLines(bucket.path, isCorpusRecord, options)) {
        if (record.timeMs < options.sinceMs || record.timeMs >= until || record.tier !== tier) continue;
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
      for (const bucket of await this.#buckets(tier)) {
        bytes += (await stat(bucket.path)).size;
        for await (const record of readJsonLines(bucket.path, isCorpusRecord, options)) {
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
      for (const bucket of await this.#buckets(name)) {
        if (bucket.startMs >= beforeMs) continue;
        deleted += await fileMutex.run(bucket.path, () =>
          this.#files.guard(`prune ${bucket.path}`, () =>
            bucket.startMs + HOUR_MS <= beforeMs ? this.#dropFile(bucket.path) : this.#rewriteKeeping(bucket.path, beforeMs),
          ),
        );
      }
    }
    return deleted;
  }

  async #dropFile(path: string): Promise<number> {
    let count = 0;
    for await (const _ of readJsonLines(path, isCorpusRecord)) count++;
    await rm(path, { force: true });
    return count;
  }

  /** The boundary hour: keep its newer records, written beside and renamed over the old file. */
  async #rewriteKeeping(path: string, beforeMs: number): Promise<number> {
    const kept: string[] = [];
    let dropped = 0;
    for await (const record of readJsonLines(path, isCorpusRecord)) {
      if (record.timeMs < beforeMs) dropped++;
      else kept.push(JSON.stringify(record));
    }
    if (dropped > 0) {
      await writeFileAtomic(path, kept.length > 0 ? `${kept.join('\n')}\n` : '');
    }
    return dropped;
  }

  async #buckets(tier: string): Promise<{ path: string; startMs: number }[]> {
    const names = await this.#files.list(join('corpus', tier));
    return names
      .filter((name) => BUCKET_FILE.test(name))
      .sort()
      .map((name) => ({ path: join(this.#files.dir, 'corpus', tier, name), startMs: bucketStartMs(name) }));
  }
}
