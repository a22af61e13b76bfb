/**
 * Serializes operations on one file inside this process, so an append never
 * interleaves with a rewrite (prune) or another append of the same file.
 */
export class FileMutex {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Run `task` after every task queued earlier for `path`; errors propagate to the caller only. */
  run<T>(path: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(path) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.#tails.set(path, tail);
    void tail.then(() => {
      if (this.#tails.get(path) === tail) this.#tails.delete(path);
    });
    return result;
  }
}
