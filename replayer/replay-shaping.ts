/**
 * What of the corpus a workload replays, and how: filters (methods, path
 * globs to include and exclude) and header rewrites (drop, set). A stateful
 * service under test changes its own state with every replayed write; a
 * filter that replays reads only, or a rewrite that drops `accept-encoding`
 * so bodies come back uncompressed, are the owner's choice (docs/replayer.md).
 * Paths are matched without their query, with picomatch globs (`/api/**`).
 */
import picomatch from 'picomatch';
import type { CorpusRecord } from '../core/index.js';

export interface ReplayShaping {
  readonly filter?: { readonly methods?: readonly string[]; readonly paths?: readonly string[]; readonly excludePaths?: readonly string[] };
  readonly rewrite?: { readonly dropHeaders?: readonly string[]; readonly setHeaders?: Readonly<Record<string, string>> };
}

export interface ShapedCorpus {
  readonly records: AsyncIterable<CorpusRecord>;
  /** Records the filter left out so far. */
  readonly filtered: () => number;
}

const pathOf = (path: string): string => {
  const q = path.search(/[?#]/);
  return q < 0 ? path : path.slice(0, q);
};

/** The records a trial replays, filtered and rewritten; the identity when nothing is configured. */
export function shapeCorpus(records: AsyncIterable<CorpusRecord>, shaping: ReplayShaping): ShapedCorpus {
  const methods = shaping.filter?.methods?.map((m) => m.toUpperCase());
  const include = shaping.filter?.paths && shaping.filter.paths.length > 0 ? picomatch([...shaping.filter.paths], { dot: true }) : undefined;
  const exclude =
    shaping.filter?.excludePaths && shaping.filter.excludePaths.length > 0 ? picomatch([...shaping.filter.excludePaths], { dot: true }) : undefined;
  const drop = new Set((shaping.rewrite?.dropHeaders ?? []).map((h) => h.toLowerCase()));
  const set = Object.entries(shaping.rewrite?.setHeaders ?? {}).map(([name, value]) => [name.toLowerCase(), value] as const);
  const rewrites = drop.size > 0 || set.length > 0;
  let filtered = 0;
  if (methods === undefined && include === undefined && exclude === undefined && !rewrites) return { records, filtered: () => 0 };
  const keep = (record: CorpusRecord): boolean => {
    if (methods !== undefined && !methods.includes(record.method.toUpperCase())) return false;
    const path = pathOf(record.path);
    if (include !== undefined && !include(path)) return false;
    return exclude === undefined || !exclude(path);
  };
  const rewrite = (record: CorpusRecord): CorpusRecord => {
    if (!rewrites) return record;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(record.headers)) if (!drop.has(name.toLowerCase())) headers[name] = value;
    for (const [name, value] of set) headers[name] = value;
    return { ...record, headers };
  };
  return {
    records: (async function* () {
      for await (const record of records) {
        if (!keep(record)) {
          filtered++;
          continue;
        }
        yield rewrite(record);
      }
    })(),
    filtered: () => filtered,
  };
}

/** A trial's records: the corpus from its first record, read again each time it ends with `replay.wrap`, shaped. */
export function trialCorpus(corpus: () => AsyncIterable<CorpusRecord>, replay: ReplayShaping & { readonly wrap: boolean }): ShapedCorpus {
  return shapeCorpus(replay.wrap ? wrapped(corpus) : corpus(), replay);
}

/**
 * The corpus read again from its first record each time it ends (`replay.wrap`); the replay's window
 * bounds it. A pass that yields nothing ends it: an empty corpus does not spin.
 */
export async function* wrapped(corpus: () => AsyncIterable<CorpusRecord>): AsyncGenerator<CorpusRecord> {
  for (;;) {
    let yielded = 0;
    for await (const record of corpus()) {
      yielded++;
      yield record;
    }
    if (yielded === 0) return;
  }
}
