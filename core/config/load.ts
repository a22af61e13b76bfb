/**
 * Config is parsed once, at the edge: text in, a frozen typed config or a
 * ConfigError listing every issue out, each with its path and, for files,
 * its line and column.
 */
import { readFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { LineCounter, isMap, isPair, isScalar, parseDocument, type Document } from 'yaml';
import { ConfigError, errorMessage } from '../errors.js';
import { configSchema, type TandemConfig } from './schema.js';
import { formatIssues, formatPath, type FormattedIssue } from './format-issues.js';
import { duplicateNameIssues } from './unique-names.js';

/** Looked for, in order, in the working directory when `--config` is not given. */
export const DEFAULT_CONFIG_FILES = ['tandem.config.yaml', 'tandem.config.yml', 'tandem.config.json'] as const;

/** A validated config and where it came from. */
export interface LoadedConfig {
  readonly config: TandemConfig;
  /** Absolute path of the file, or undefined when built-in defaults were used. */
  readonly path: string | undefined;
}

/** Every problem of a raw config value, or the typed config when there are none. */
function check(raw: unknown): { config: TandemConfig; issues: [] } | { config?: undefined; issues: FormattedIssue[] } {
  let result;
  try {
    result = configSchema.safeParse(raw ?? {}, { reportInput: true });
  } catch (error) {
    if (error instanceof RangeError) return { issues: [{ text: 'the config is nested too deeply to validate', path: [] }] };
    throw error;
  }
  const issues = [...(result.success ? [] : formatIssues(result.error.issues, configSchema)), ...duplicateNameIssues(raw)];
  if (result.success && issues.length === 0) return { config: deepFreeze(result.data), issues: [] };
  return { issues };
}

/** Validate an already-parsed value (tests, programmatic use). Throws ConfigError. */
export function parseConfig(value: unknown, source = 'config'): TandemConfig {
  const { config, issues } = check(value);
  if (config === undefined)
    throw new ConfigError(
      issues.map((issue) => issue.text),
      source,
    );
  return config;
}

/**
 * Largest config read: a real one is a few kilobytes (the example stack's is 3 KB; a monorepo's with
 * templates stays far below this). Parsing YAML with positions costs about 60 times the text in memory
 * and grows faster than the text in time, so a 50 MB file would take minutes and gigabytes: refused first.
 */
export const MAX_CONFIG_BYTES = 1_048_576;

function tooLarge(bytes: number, source: string): ConfigError {
  return new ConfigError(
    [
      `the config is ${(bytes / 1_048_576).toFixed(1)} MiB; a Tandem config is at most ${MAX_CONFIG_BYTES / 1_048_576} MiB (generate workloads with templates instead of listing thousands)`,
    ],
    source,
  );
}

/** Parse YAML or JSON text (JSON is read as YAML 1.2, so one parser gives positions for both). */
export function parseConfigText(text: string, source = 'config'): TandemConfig {
  // Characters first (cheap): each is at least one byte.
  if (text.length > MAX_CONFIG_BYTES || Buffer.byteLength(text) > MAX_CONFIG_BYTES) throw tooLarge(Buffer.byteLength(text), source);
  const lineCounter = new LineCounter();
  let doc: Document;
  let value: unknown;
  try {
    doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
    value = doc.errors.length > 0 ? undefined : doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new ConfigError([unreadableYaml(error)], source, { cause: error });
  }
  if (doc.errors.length > 0) {
    throw new ConfigError(
      doc.errors.map((e) => {
        const at = e.pos[0] !== undefined ? lineCounter.linePos(e.pos[0]) : undefined;
        const message = e.message.split('\n')[0]!;
        return `${at ? `line ${at.line}:${at.col}: ` : ''}${/call stack/i.test(message) ? 'the YAML is nested too deeply to read' : message}`;
      }),
      source,
    );
  }
  const { config, issues } = check(value);
  if (config !== undefined) return config;
  // Reported in file order, so a person can walk down the file fixing them.
  const located = issues.map((issue) => ({ issue, at: positionOf(doc, issue.path, issue.key, lineCounter) }));
  located.sort((a, b) => (a.at?.line ?? Number.MAX_SAFE_INTEGER) - (b.at?.line ?? Number.MAX_SAFE_INTEGER) || (a.at?.col ?? 0) - (b.at?.col ?? 0));
  throw new ConfigError(
    located.map(({ issue, at }) => (at ? `${issue.text} (line ${at.line}:${at.col})` : issue.text)),
    source,
  );
}

/** A YAML document the parser gave up on: an alias bomb, or nesting deeper than a stack. */
function unreadableYaml(error: unknown): string {
  const message = errorMessage(error);
  if (/alias/i.test(message)) return `the YAML expands too many aliases (an alias bomb?): ${message}`;
  if (error instanceof RangeError) return 'the YAML is nested too deeply to read';
  return `the YAML cannot be read: ${message}`;
}

/**
 * Read the config named by `path`, or the first default file in `cwd`. With no
 * explicit path and no file, the built-in defaults are used (local store, inline queue).
 */
export async function loadConfig(options: { path?: string | undefined; cwd?: string; requireFile?: boolean } = {}): Promise<LoadedConfig> {
  const cwd = options.cwd ?? process.cwd();
  let file: string | undefined;
  if (options.path !== undefined) {
    file = resolve(cwd, options.path);
    if (!existsSync(file)) throw new ConfigError([`config file ${file} does not exist`], 'config');
  } else {
    file = DEFAULT_CONFIG_FILES.map((name) => resolve(cwd, name)).find((candidate) => existsSync(candidate));
  }
  if (file === undefined) {
    if (options.requireFile) {
      throw new ConfigError([`no config file found: looked for ${DEFAULT_CONFIG_FILES.join(', ')} in ${cwd} (pass --config FILE)`], 'config');
    }
    return { config: parseConfig({}), path: undefined };
  }
  let text: string;
  try {
    const { size } = await stat(file);
    if (size > MAX_CONFIG_BYTES) throw tooLarge(size, file);
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError([`cannot read ${file}: ${errorMessage(error)}`], 'config', { cause: error });
  }
  return { config: parseConfigText(text, file), path: file };
}

function positionOf(doc: Document, path: readonly PropertyKey[], key: string | undefined, lineCounter: LineCounter): { line: number; col: number } | undefined {
  const keys = path.map((p) => (typeof p === 'symbol' ? String(p) : p));
  let node: unknown = keys.length === 0 ? doc.contents : doc.getIn(keys, true);
  // An issue about a missing key points at its parent object.
  for (let depth = keys.length - 1; node === undefined && depth >= 0; depth--) {
    node = depth === 0 ? doc.contents : doc.getIn(keys.slice(0, depth), true);
  }
  if (key !== undefined && isMap(node)) {
    const pair = node.items.find((item) => isPair(item) && isScalar(item.key) && item.key.value === key);
    if (pair && isScalar(pair.key) && pair.key.range) return lineCounter.linePos(pair.key.range[0]);
  }
  const range = (node as { range?: [number, number, number] } | undefined)?.range;
  return range ? lineCounter.linePos(range[0]) : undefined;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

export { formatPath };
