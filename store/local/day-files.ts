/** Day-bucketed and grouped NDJSON files of the local backend: what its append-only sub-stores share. */
import { dirname, join } from 'node:path';
import type { ReadOptions } from '../store.js';
import type { LocalFiles } from './local-files.js';
import { appendLines, readJsonLines } from './ndjson-file.js';

export const DAY_MS = 86_400_000;

/** UTC day of a time, as used in day-bucketed file names. */
export function dayName(timeMs: number): string {
  return new Date(Math.floor(timeMs / DAY_MS) * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '');
}

export function dayStartMs(name: string): number {
  return Date.UTC(Number(name.slice(0, 4)), Number(name.slice(4, 6)) - 1, Number(name.slice(6, 8)));
}

/** Append records to files chosen per record, one write per file. */
export async function appendGrouped<T>(files: LocalFiles, folder: string, records: readonly T[], fileOf: (record: T) => string, nested = false): Promise<void> {
  const groups = new Map<string, string[]>();
  for (const record of records) {
    const path = join(files.dir, folder, fileOf(record));
    let lines = groups.get(path);
    if (!lines) groups.set(path, (lines = []));
    lines.push(JSON.stringify(record));
  }
  for (const [path, lines] of groups) {
    await files.guard(`append to ${path}`, async () => {
      await files.ensureDir(nested ? dirname(path) : join(files.dir, folder));
      await appendLines(path, lines);
    });
  }
}

/** Records of the day-bucketed files of `folder` that may hold times at or after `sinceMs`. */
export async function* readDays<T>(
  files: LocalFiles,
  folder: string,
  sinceMs: number,
  accept: (v: unknown) => v is T,
  options: ReadOptions,
): AsyncGenerator<T> {
  const days = (await files.list(folder)).filter((name) => /^\d{8}\.ndjson$/.test(name)).sort();
  for (const day of days) {
    if (dayStartMs(day) + DAY_MS <= sinceMs) continue;
    yield* readJsonLines(join(files.dir, folder, day), accept, options);
  }
}
