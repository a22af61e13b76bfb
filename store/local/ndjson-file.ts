/**
 * Append-only NDJSON files that survive a crash or kill at any instant:
 * every batch is one `write` with O_APPEND, whole lines only; a torn last line
 * (a write cut short by a kill) is skipped and reported on read, and the next
 * append starts on a fresh line so it is not glued to the fragment.
 */
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { FileMutex } from './file-mutex.js';

/** Files created by the local store are private to their owner (recorded bodies may hold data). */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

export const fileMutex = new FileMutex();

/** Append `lines` (each without a newline) to `path` as one write. */
export async function appendLines(path: string, lines: readonly string[]): Promise<void> {
  if (lines.length === 0) return;
  await fileMutex.run(path, async () => {
    const handle = await open(path, 'a+', FILE_MODE);
    try {
      // Checked on every append, not once: another process may have died mid-line since.
      const prefix = (await endsTorn(handle)) ? '\n' : '';
      await writeAll(handle, Buffer.from(`${prefix}${lines.join('\n')}\n`));
    } finally {
      await handle.close();
    }
  });
}

/**
 * One write may write less than asked (a full disk writes what fits and
 * reports the count, not an error): write the rest, and fail when nothing more
 * fits, so a torn line is never reported as written.
 */
async function writeAll(handle: import('node:fs/promises').FileHandle, data: Buffer): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset);
    if (bytesWritten <= 0) throw Object.assign(new Error('no space left on device (a write wrote nothing)'), { code: 'ENOSPC' });
    offset += bytesWritten;
  }
}

async function endsTorn(handle: import('node:fs/promises').FileHandle): Promise<boolean> {
  const { size } = await handle.stat();
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  await handle.read(last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}

/** Where a bad line was found, for `onCorrupt`. */
export type CorruptHandler = (where: string, reason: string) => void;

/**
 * Parsed lines of `path`, in file order; lines that are not JSON, or that
 * `accept` rejects, are reported to `onCorrupt` and skipped. A missing file is empty.
 */
export async function* readJsonLines<T>(
  path: string,
  accept: (value: unknown) => value is T,
  options: { signal?: AbortSignal; onCorrupt?: CorruptHandler } = {},
): AsyncGenerator<T> {
  try {
    await stat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const input = createReadStream(path, { encoding: 'utf8', highWaterMark: 256 * 1024 });
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let lineNumber = 0;
  try {
    for await (const line of lines) {
      lineNumber++;
      options.signal?.throwIfAborted();
      if (line === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        options.onCorrupt?.(`${path}:${lineNumber}`, 'not valid JSON (torn or corrupt line)');
        continue;
      }
      if (accept(value)) yield value;
      else options.onCorrupt?.(`${path}:${lineNumber}`, 'JSON does not have the fields of this record type');
    }
  } finally {
    lines.close();
    input.destroy();
  }
}
