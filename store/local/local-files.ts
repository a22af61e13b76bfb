/**
 * The local store's directory: private directories, listing that treats a
 * missing directory as empty, and one place that turns file-system errors
 * into a StoreError naming the path and what to do.
 */
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError, errorMessage } from '../../core/index.js';
import { DIR_MODE } from './ndjson-file.js';

export class LocalFiles {
  readonly #ready = new Set<string>();

  constructor(readonly dir: string) {}

  async ensureDir(path: string): Promise<void> {
    if (this.#ready.has(path)) return;
    await mkdir(path, { recursive: true, mode: DIR_MODE });
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
      code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
        ? `make ${this.dir} writable by this user, or set store.dir`
        : code === 'ENOTDIR' || code === 'EEXIST'
          ? `a file stands where the store needs a directory; set store.dir to a directory path`
          : code === 'ENOSPC'
            ? 'free disk space'
            : undefined;
    return new StoreError(`local store at ${this.dir}: cannot ${what}: ${errorMessage(error)}`, { cause: error, ...(hint ? { hint } : {}) });
  }
}
