/**
 * The config consumption index: services say which config files (and
 * settings) they read. A library call buffers reads in memory — one entry per
 * (service, file, setting), the latest time kept — and flushes them in
 * batches, so reporting never slows the service; an HTTP ingest endpoint
 * takes the same reads from services in other languages. Both end in the
 * store (ConfigReadStore: latest read per service, file and setting).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { bearerCheck, hasControlCharacters, InputError, listenOn, readBody, replyJson, UpstreamError, type Clock, type ConfigRead } from '../core/index.js';

export type ConfigReadSink = (reads: readonly ConfigRead[]) => Promise<void>;

export interface ConfigReadReporterOptions {
  readonly service: string;
  readonly sink: ConfigReadSink;
  readonly clock: Clock;
  /** @default 5000 */
  readonly flushIntervalMs?: number;
  /** Distinct (file, setting) pairs held before reads are dropped and counted. @default 10000 */
  readonly maxPending?: number;
}

export class ConfigReadReporter {
  readonly #options: ConfigReadReporterOptions;
  readonly #pending = new Map<string, ConfigRead>();
  readonly #stop = new AbortController();
  readonly #loop: Promise<void>;
  dropped = 0;
  failedFlushes = 0;

  constructor(options: ConfigReadReporterOptions) {
    this.#options = options;
    this.#loop = this.#run();
  }

  /** Record that the service read `file` (and `setting`, a dotted path, when known). Cheap: a map update. */
  read(file: string, setting = ''): void {
    const key = `${file}\u0000${setting}`;
    const existing = this.#pending.get(key);
    if (!existing && this.#pending.size >= (this.#options.maxPending ?? 10_000)) {
      this.dropped++;
      return;
    }
    this.#pending.set(key, { service: this.#options.service, file, setting, timeMs: this.#options.clock.now() });
  }

  async flush(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = [...this.#pending.values()];
    this.#pending.clear();
    try {
      await this.#options.sink(batch);
    } catch {
      // Kept for the next flush (newer reads of the same key win); the index is best effort, the service is not.
      this.failedFlushes++;
      for (const r of batch) {
        const key = `${r.file}\u0000${r.setting}`;
        if (!this.#pending.has(key)) this.#pending.set(key, r);
      }
    }
  }

  async #run(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      try {
        await this.#options.clock.sleep(this.#options.flushIntervalMs ?? 5_000, this.#stop.signal);
      } catch {
        break;
      }
      await this.flush();
    }
  }

  async close(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
    await this.flush();
  }
}

/** A sink posting to a Tandem ingest endpoint. */
export function httpConfigReadSink(url: string, token?: string): ConfigReadSink {
  return async (reads) => {
    const response = await request(`${url.replace(/\/$/, '')}/config-reads`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(reads),
      headersTimeout: 5_000,
      bodyTimeout: 5_000,
    });
    const text = await response.body.text();
    if (response.statusCode !== 202) throw new UpstreamError(`ingest answered ${response.statusCode}: ${text.slice(0, 200)}`);
  };
}

const MAX_BODY_BYTES = 1_048_576;

/** Longest names accepted: a path as long as Linux allows, a service or setting name of a sane length. */
const MAX_LENGTH = { service: 200, file: 4_096, setting: 1_000 } as const;

function checkText(e: Record<string, unknown>, field: keyof typeof MAX_LENGTH, index: number, required: boolean): string | undefined {
  const value = e[field];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string') return `entry ${index}: "${field}" must be a string, got ${value === undefined ? 'nothing' : typeof value}`;
  if (required && value === '') return `entry ${index}: "${field}" must not be empty`;
  if (value.length > MAX_LENGTH[field]) return `entry ${index}: "${field}" must be at most ${MAX_LENGTH[field]} characters, got ${value.length}`;
  if (hasControlCharacters(value)) return `entry ${index}: "${field}" must not contain control characters`;
  return undefined;
}

/** Check one posted read; the message names the entry, the field and what was wrong. */
function validate(entry: unknown, index: number, nowMs: number): ConfigRead | string {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return `entry ${index}: must be an object`;
  const e = entry as Record<string, unknown>;
  const bad = checkText(e, 'service', index, true) ?? checkText(e, 'file', index, true) ?? checkText(e, 'setting', index, false);
  if (bad !== undefined) return bad;
  // Epoch milliseconds from 1970 to a minute ahead (clock skew): a year −1000 or −1e20 is a client's bug, not a read.
  if (e.timeMs !== undefined && (typeof e.timeMs !== 'number' || !Number.isSafeInteger(e.timeMs) || e.timeMs < 0 || e.timeMs > nowMs + 60_000)) {
    return `entry ${index}: "timeMs" must be whole epoch milliseconds from 0 (1970) to now, got ${JSON.stringify(e.timeMs)?.slice(0, 40) ?? String(e.timeMs)}`;
  }
  return {
    service: e.service as string,
    file: e.file as string,
    setting: (e.setting as string | undefined) ?? '',
    timeMs: (e.timeMs as number | undefined) ?? nowMs,
  };
}

export interface IngestServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * POST /config-reads with a JSON array (or NDJSON) of {service, file, setting?, timeMs?}:
 * 202 when stored, 400 naming the bad entry (nothing of that request is stored), 401 without
 * the bearer token when one is configured, 413 above 1 MiB.
 */
export async function startIngestServer(options: {
  host: string;
  port: number;
  token?: string | undefined;
  sink: ConfigReadSink;
  clock: Clock;
}): Promise<IngestServer> {
  const authorized = bearerCheck(options.token);
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method === 'GET' && req.url === '/healthz') return replyJson(res, 200, { ok: true });
    if (req.url !== '/config-reads') return replyJson(res, 404, { error: 'not found: POST /config-reads' });
    if (req.method !== 'POST') return replyJson(res, 405, { error: 'use POST' });
    if (!authorized(req)) return replyJson(res, 401, { error: 'missing or wrong bearer token' });
    const text = (await readBody(req, MAX_BODY_BYTES))?.trim();
    if (text === undefined) return replyJson(res, 413, { error: `body above ${MAX_BODY_BYTES} bytes: send smaller batches` });
    let entries: unknown[];
    try {
      entries = text.startsWith('[')
        ? (JSON.parse(text) as unknown[])
        : text
            .split('\n')
            .filter((l) => l.trim() !== '')
            .map((line, i) => {
              try {
                return JSON.parse(line) as unknown;
              } catch {
                throw new InputError(`line ${i + 1}: not JSON`);
              }
            });
    } catch (error) {
      return replyJson(res, 400, { error: `body must be a JSON array or NDJSON: ${(error as Error).message}` });
    }
    const nowMs = options.clock.now();
    const reads: ConfigRead[] = [];
    for (const [i, entry] of entries.entries()) {
      const checked = validate(entry, i, nowMs);
      if (typeof checked === 'string') return replyJson(res, 400, { error: checked });
      reads.push(checked);
    }
    try {
      await options.sink(reads);
    } catch (error) {
      // Input the store refused is the client's to fix (400); only a store that failed is worth a retry (503).
      if (error instanceof InputError) return replyJson(res, 400, { error: error.message });
      return replyJson(res, 503, { error: `store unavailable: ${(error as Error).message}` });
    }
    replyJson(res, 202, { accepted: reads.length });
  };
  const server: Server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  await listenOn(server, options.port, options.host, 'config-read ingest');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
