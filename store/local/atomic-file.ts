/**
 * Whole-file writes that a crash cannot tear: write a temporary file beside
 * the target, flush it, then rename over the target (rename is atomic on POSIX).
 */
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { FILE_MODE } from './ndjson-file.js';

export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const handle = await open(temp, 'wx', FILE_MODE);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
