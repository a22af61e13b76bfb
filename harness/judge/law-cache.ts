/**
 * Laws of the looks kept on disk between processes. A law is a pure function of its design and of the code that
 * simulates it (harness/judge/sequential.ts: 16,000 seeded sequences through the very looks that judge), and simulating
 * one costs 3.3–4 s of CPU for looks 4..48 on two cores: every `tandem run`, worker and demo process paid it at
 * its first look, and the demo, which simulates it while it records, read ranking's CPU per request a third high
 * meanwhile and then probed it again (docs/demo.md).
 *
 * A kept law is trusted only when it is still the law this code would simulate. Each file carries a fingerprint,
 * the raw q of the law's first sequences at every look, which a read simulates afresh (64 of 16,000 sequences, a
 * few milliseconds): any change to the looks, the estimator, the seeds or the sequence count changes it, and the
 * law is simulated again and the file replaced. A checksum over the arrays catches a file damaged on disk; the
 * file must be the user's own and writable by nobody else, in a directory only the user can enter. Whatever does
 * not hold is a miss, never an error: the look simulates, as it always could.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { LawKey, NullLaw } from './null-law.js';

export interface LawCache {
  /** The law kept for this design, if it is whole, the user's own and `fingerprint` is still its fingerprint. */
  read(design: LawKey, expected: LawShape): NullLaw | undefined;
  /** Keep the law (best effort: a cache that cannot be written is no cache). */
  write(design: LawKey, law: NullLaw, shape: LawShape): void;
}

/** What a kept law must match: its design's key, its sequences per look, and the fingerprint this code simulates for it. */
export interface LawShape {
  /** The design as sequential.ts keys its laws (lawKeyOf). */
  readonly key: string;
  readonly simulations: number;
  readonly fingerprint: () => string;
}

let chosen: LawCache | undefined;

/** Keep laws between processes there (the CLI chooses its cache directory, cli/main.ts), or nowhere (undefined). */
export function useLawCache(cache: LawCache | undefined): void {
  chosen = cache;
}

/** The cache the looks read and write laws through, if any. */
export const chosenLawCache = (): LawCache | undefined => chosen;

const FORMAT = 'tandem-law/1';
/** Laws kept per directory (about 12 MB each at 48 looks); the least recently written go first. */
const KEPT_FILES = 16;
/** The header line is a few hundred bytes; anything longer is not ours. */
const MAX_HEADER_BYTES = 4_096;

interface Header {
  readonly format: string;
  readonly design: string;
  readonly simulations: number;
  readonly looks: number;
  readonly fingerprint: string;
  readonly sha256: string;
}

/** The file of a design: built from its validated fields only (an integer and three words), never from free text. */
function fileOf(dir: string, design: LawKey): string {
  return join(
    dir,
    `law-${Math.trunc(design.maxTrials)}-${design.slotted ? 'slotted' : 'unslotted'}-${design.serial === 'given' ? 'given' : 'own'}-${design.estimator === 'mean' ? 'mean' : 'huber'}.bin`,
  );
}

/** Laws kept as files under `dir` (created private to the user: 0700, files 0600). */
export function fileLawCache(dir: string): LawCache {
  return {
    read(design, expected) {
      try {
        if (!isPrivateDir(dir)) return undefined;
        // One descriptor for the check and the read: the file checked is the file read.
        const fd = openSync(fileOf(dir, design), 'r');
        let bytes: Buffer;
        try {
          const stat = fstatSync(fd);
          if (!stat.isFile() || !ownedAndClosed(stat, 0o022)) return undefined;
          bytes = readFileSync(fd);
        } finally {
          closeSync(fd);
        }
        const newline = bytes.subarray(0, MAX_HEADER_BYTES).indexOf(0x0a);
        if (newline < 0) return undefined;
        const header = JSON.parse(bytes.subarray(0, newline).toString('utf8')) as Partial<Header>;
        const looks = Math.trunc(design.maxTrials);
        const payload = bytes.subarray(newline + 1);
        if (header.format !== FORMAT || header.design !== expected.key || header.simulations !== expected.simulations || header.looks !== looks)
          return undefined;
        if (payload.length !== 2 * looks * expected.simulations * 8) return undefined;
        if (header.sha256 !== createHash('sha256').update(payload).digest('hex')) return undefined;
        if (header.fingerprint !== expected.fingerprint()) return undefined;
        // Copied out: the read buffer's offset need not be a multiple of 8, which a Float64Array view requires.
        const arrays = Array.from(
          { length: 2 * looks },
          (_, i) =>
            new Float64Array(payload.buffer.slice(payload.byteOffset + i * expected.simulations * 8, payload.byteOffset + (i + 1) * expected.simulations * 8)),
        );
        return { sorted: arrays.slice(0, looks), calibrated: arrays.slice(looks) };
      } catch {
        return undefined;
      }
    },
    write(design, law, shape) {
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        if (!isPrivateDir(dir)) return;
        const payload = Buffer.concat([...law.sorted, ...law.calibrated].map((values) => Buffer.from(values.buffer, values.byteOffset, values.byteLength)));
        const header: Header = {
          format: FORMAT,
          design: shape.key,
          simulations: shape.simulations,
          looks: law.sorted.length,
          fingerprint: shape.fingerprint(),
          sha256: createHash('sha256').update(payload).digest('hex'),
        };
        // Written whole under another name and renamed: a reader (or a crash) never sees half a law.
        const file = fileOf(dir, design);
        const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.partial`;
        writeFileSync(partial, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), payload]), { mode: 0o600, flag: 'wx' });
        renameSync(partial, file);
        evictBeyond(dir, KEPT_FILES);
      } catch {
        // No cache is still a correct judge.
      }
    },
  };
}

/** Owned by this user, and none of `others` (mode bits) set for group or others. */
function ownedAndClosed(stat: Stats, others: number): boolean {
  const uid = process.getuid?.();
  return (uid === undefined || stat.uid === uid) && (stat.mode & others) === 0;
}

/** A directory of this user's that nobody else may enter or write. */
function isPrivateDir(path: string): boolean {
  const stat = statSync(path);
  return stat.isDirectory() && ownedAndClosed(stat, 0o077);
}

/** The `kept` most recently written laws stay; partial files a killed writer left are removed after ten minutes. */
function evictBeyond(dir: string, kept: number): void {
  const files = readdirSync(dir)
    .filter((name) => name.startsWith('law-'))
    .map((name) => ({ name, path: join(dir, name), mtimeMs: statSync(join(dir, name)).mtimeMs }));
  const laws = files.filter((f) => f.name.endsWith('.bin')).sort((a, b) => b.mtimeMs - a.mtimeMs);
  const stale = files.filter((f) => f.name.endsWith('.partial') && f.mtimeMs < Date.now() - 600_000);
  for (const old of [...laws.slice(kept), ...stale]) rmSync(old.path, { force: true });
}

/**
 * Where the CLI keeps laws: `TANDEM_CACHE_DIR` (empty: no cache), else `$XDG_CACHE_HOME/tandem`, else
 * `~/.cache/tandem`; always its `laws` directory. Undefined when caching is off or there is no home (os.homedir
 * throws where the user has no entry and no HOME: every command would otherwise fail before it starts).
 */
export function lawCacheDir(env: NodeJS.ProcessEnv, home: () => string = homedir): string | undefined {
  const chosen = env.TANDEM_CACHE_DIR;
  if (chosen !== undefined) return chosen === '' ? undefined : join(chosen, 'laws');
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'tandem', 'laws');
  try {
    const dir = home();
    return dir ? join(dir, '.cache', 'tandem', 'laws') : undefined;
  } catch {
    return undefined;
  }
}
