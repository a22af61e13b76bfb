/**
 * The local store's directory: private directories, listing that treats a
 * missing directory as empty, and one place that turns file-system errors
 * into a StoreError naming the path and what to do.
 */
import { mkdir, readdir, rmdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { StoreError, errorMessage } from '../../core/index.js';
import { DIR_MODE } from './ndjson-file.js';

/**
 * Node's recursive mkdir answers ENOENT on a read-only file system (and for some refusals on the way):
 * the real reason comes from creating the first missing directory alone, below its nearest existing parent.
 */
async function realMkdirError(path: string, error: unknown): Promise<unknown> {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return error;
  let missing = path;
  for (let parent = dirname(missing); parent !== missing; missing = parent, parent = dirname(parent)) {
    try {
      await stat(parent);
    } catch {
      continue;
    }
    try {
      await mkdir(missing, { mode: DIR_MODE });
      await rmdir(missing); // it could be made after all: the first error stands
    } catch (real) {
      if ((real as NodeJS.ErrnoException).code !== 'EEXIST') return real;
    }
    break;
  }
  return error;
}

export class LocalFiles {
  readonly #ready = new Set<string>();

  constructor(readonly dir: string) {}

  async ensureDir(path: string): Promise<void> {
    if (this.#ready.has(path)) return;
    try {
      await mkdir(path, { recursive: true, mode: DIR_MODE });
    } catch (error) {
      throw await realMkdirError(path, error);
    }
    this.#ready.add(path);
  }

  /** Entries of a directory below the store root; none when it does not exist. */
  async list(relative: string): Promise<string[]> {
    try {
      return await readdir(join(this.dir, relative));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw this.wrap(`list ${join(this.dir, relative)}`, error);
    }
  }

  /** Run a file operation; a failure becomes a StoreError that says what was attempted where. */
  async guard<T>(what: string, operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw this.wrap(what, error);
    }
  }

  wrap(what: string, error: unknown): Error {
    if (error instanceof StoreError || (error as { name?: string }).name === 'AbortError') return error as Error;
    const code = (error as NodeJS.ErrnoException).code;
    const hint =
      code === 'EROFS'
        ? `${this.dir} is on a read-only file system: set store.dir to a writable place`
        : code === 'EACCES' || code === 'EPERM'
          ? `make ${this.dir} writable by this user, or set store.dir`
          : code === 'ENOTDIR' || code === 'EEXIST'
            ? `a file stands where the store needs a directory; set store.dir to a directory path`
            : code === 'ENOSPC'
              ? 'free disk space'
              : undefined;
    return new StoreError(`local store at ${this.dir}: cannot ${what}: ${errorMessage(error)}`, { cause: error, ...(hint ? { hint } : {}) });
  }
}
