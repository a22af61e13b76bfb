/**
 * Files the CLI writes with recorded data (`corpus export --out`) are private
 * to their owner whatever stood at the path before: the lines stream into a
 * new 0600 file beside the target, which is then renamed over it. Renaming
 * replaces a symlink instead of following it, and leaves no half-written
 * export if the command dies midway.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { InputError, errorMessage } from '../core/index.js';

export async function writePrivateLines(path: string, lines: AsyncIterable<string>): Promise<number> {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  let count = 0;
  try {
    const handle = await open(temp, 'wx', 0o600);
    try {
      let pending: string[] = [];
      for await (const line of lines) {
        pending.push(line);
        count++;
        if (pending.length >= 1_000) {
          await handle.write(`${pending.join('\n')}\n`);
          pending = [];
        }
      }
      if (pending.length > 0) await handle.write(`${pending.join('\n')}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
    return count;
  } catch (error) {
    await rm(temp, { force: true });
    if ((error as { code?: string }).code !== undefined) throw new InputError(`cannot write ${path}: ${errorMessage(error)}`, { cause: error });
    throw error;
  }
}
