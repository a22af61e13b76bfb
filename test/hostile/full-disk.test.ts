/**
 * A full disk (issue 18): a write that fits only part of a batch must not
 * leave a torn line counted as written. The disk is the boundary we do not
 * own, so it is simulated: file handles whose writes fit 10 bytes, then none.
 */
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { tempDir } from '../support/temp-dir.js';
import { appendLines } from '../../store/local/ndjson-file.js';

const disk = vi.hoisted(() => ({ room: Number.POSITIVE_INFINITY, perWrite: Number.POSITIVE_INFINITY }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const open = async (...args: Parameters<typeof real.open>): ReturnType<typeof real.open> => {
    const handle = await real.open(...args);
    const write = handle.write.bind(handle) as (buffer: Buffer, offset: number, length: number) => Promise<{ bytesWritten: number; buffer: Buffer }>;
    // Writes fit what is left on the "disk"; a write with no room writes nothing, as write(2) on a full disk may.
    (handle as unknown as { write: unknown }).write = async (buffer: Buffer, offset = 0, length = buffer.length - offset) => {
      const n = Math.min(disk.room, length, disk.perWrite);
      disk.room -= n;
      return n === 0 ? { bytesWritten: 0, buffer } : write(buffer, offset, n);
    };
    return handle;
  };
  return { ...real, open, default: { ...real, open } };
});

describe('a full disk', () => {
  it('a write cut short is completed when room remains', async () => {
    const dir = await tempDir();
    disk.room = Number.POSITIVE_INFINITY;
    disk.perWrite = 5;
    const { readFile } = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises');
    await appendLines(join(dir, 'f.ndjson'), ['{"a":1}', '{"b":2}']);
    disk.perWrite = Number.POSITIVE_INFINITY;
    expect(await readFile(join(dir, 'f.ndjson'), 'utf8')).toBe('{"a":1}\n{"b":2}\n');
  });

  it('a write that cannot finish rejects (a store error), never resolving as written', async () => {
    const dir = await tempDir();
    disk.room = 10;
    await expect(appendLines(join(dir, 'f.ndjson'), ['{"a":"0123456789"}'])).rejects.toMatchObject({ code: 'ENOSPC' });
    disk.room = Number.POSITIVE_INFINITY;
  });
});
