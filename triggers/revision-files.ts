/**
 * The repository's files at a revision, without a checkout: one
 * `git ls-tree` lists them with their blob ids, one `git cat-file --batch`
 * reads any number of them. Blobs are cached by id, so reading the same
 * package.json at base and head costs one read.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { InputError } from '../core/errors.js';

const run = promisify(execFile);

export class RevisionFiles {
  readonly #repo: string;
  readonly revision: string;
  /** Path → blob id. */
  readonly #blobs: ReadonlyMap<string, string>;
  readonly #cache: Map<string, Promise<string>>;

  private constructor(repo: string, revision: string, blobs: ReadonlyMap<string, string>, cache: Map<string, Promise<string>>) {
    this.#repo = repo;
    this.revision = revision;
    this.#blobs = blobs;
    this.#cache = cache;
  }

  /** `cache` may be shared between revisions of one repository (blob id → text, read or being read). */
  static async open(repo: string, revision: string, cache = new Map<string, Promise<string>>()): Promise<RevisionFiles> {
    let stdout: string;
    try {
      ({ stdout } = await run('git', ['ls-tree', '-r', '-z', '--full-tree', revision], { cwd: repo, maxBuffer: 512 * 1024 * 1024 }));
    } catch (error) {
      throw new InputError(`git ls-tree ${revision} failed in ${repo}: ${String((error as { stderr?: string }).stderr ?? (error as Error).message).trim()}`, {
        cause: error,
      });
    }
    const blobs = new Map<string, string>();
    for (const line of stdout.split('\0')) {
      // "<mode> <type> <id>\t<path>"
      const tab = line.indexOf('\t');
      if (tab === -1) continue;
      const [, type, id] = line.slice(0, tab).split(' ');
      if (type === 'blob') blobs.set(line.slice(tab + 1), id!);
    }
    return new RevisionFiles(repo, revision, blobs, cache);
  }

  paths(): IterableIterator<string> {
    return this.#blobs.keys();
  }

  has(path: string): boolean {
    return this.#blobs.has(path);
  }

  /** The texts of `paths` that exist at this revision (absent ones are left out). */
  async read(paths: readonly string[]): Promise<Map<string, string>> {
    const wanted = paths.filter((p) => this.#blobs.has(p));
    const missing = [...new Set(wanted.map((p) => this.#blobs.get(p)!).filter((id) => !this.#cache.has(id)))];
    if (missing.length > 0) {
      // Both ends of a change read at once: a blob already being read by the other is awaited, not read twice.
      const batch = catFileBatch(this.#repo, missing);
      for (const id of missing)
        this.#cache.set(
          id,
          batch.then((texts) => texts.get(id)!),
        );
    }
    return new Map(await Promise.all(wanted.map(async (p): Promise<[string, string]> => [p, await this.#cache.get(this.#blobs.get(p)!)!])));
  }

  async readOne(path: string): Promise<string | undefined> {
    return (await this.read([path])).get(path);
  }
}

/** Blob id → text through one `git cat-file --batch`. */
function catFileBatch(repo: string, ids: readonly string[]): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['cat-file', '--batch'], { cwd: repo, stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new InputError(`git cat-file --batch failed in ${repo}: ${stderr.trim() || `exit ${code}`}`));
      const out = Buffer.concat(chunks);
      const texts = new Map<string, string>();
      let at = 0;
      for (const id of ids) {
        const eol = out.indexOf(10, at);
        const header = out.subarray(at, eol).toString();
        const [, type, size] = header.split(' ');
        if (type === 'missing' || size === undefined) return reject(new InputError(`git cat-file: blob ${id} is missing in ${repo}`));
        const start = eol + 1;
        texts.set(id, out.subarray(start, start + Number(size)).toString('utf8'));
        at = start + Number(size) + 1;
      }
      resolve(texts);
    });
    child.stdin.end(ids.join('\n') + '\n');
  });
}
