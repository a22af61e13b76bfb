/**
 * A thin layer over @clickhouse/client: every call's failure becomes one
 * StoreError that names the server URL and the server's own message, and
 * inserts are batched on the client (18.16 has no async inserts). The
 * client library is loaded on the first query, so a command that names a
 * ClickHouse store but never queries it (or uses the local store) never loads it.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { StoreError, errorMessage } from '../../core/index.js';
import type { SqlFragment } from '../sql.js';

export interface ClickHouseConnectionOptions {
  readonly url: string;
  readonly username: string;
  readonly password: string;
  readonly requestTimeoutMs: number;
  readonly batchRows: number;
}

export class ClickHouseConnection {
  #client: Promise<ClickHouseClient> | undefined;
  readonly #options: ClickHouseConnectionOptions;

  constructor(options: ClickHouseConnectionOptions) {
    this.#options = options;
  }

  #connected(): Promise<ClickHouseClient> {
    this.#client ??= import('@clickhouse/client').then(({ ClickHouseLogLevel, createClient }) =>
      createClient({
        url: this.#options.url,
        username: this.#options.username,
        password: this.#options.password,
        request_timeout: this.#options.requestTimeoutMs,
        compression: { request: false, response: true },
        // Failures reach the caller as StoreErrors; the client's own logging would print them twice.
        log: { level: ClickHouseLogLevel.OFF },
      }),
    );
    return this.#client;
  }

  get url(): string {
    return this.#options.url;
  }

  async command(statement: SqlFragment): Promise<void> {
    await this.#guard(statement.text, async () => (await this.#connected()).command({ query: statement.text }));
  }

  async rows<T>(statement: SqlFragment, signal?: AbortSignal): Promise<T[]> {
    return this.#guard(statement.text, async () => {
      const result = await (await this.#connected()).query({ query: statement.text, format: 'JSONEachRow', ...(signal ? { abort_signal: signal } : {}) });
      return (await result.json()) as T[];
    });
  }

  /** Rows one at a time, for results too large to hold (corpus reads). */
  async *stream<T>(statement: SqlFragment, signal?: AbortSignal): AsyncGenerator<T> {
    const result = await this.#guard(statement.text, async () =>
      (await this.#connected()).query({ query: statement.text, format: 'JSONEachRow', ...(signal ? { abort_signal: signal } : {}) }),
    );
    try {
      for await (const rows of result.stream()) {
        for (const row of rows as { json(): T }[]) yield row.json();
      }
    } catch (error) {
      throw this.#wrap(error, statement.text);
    } finally {
      // A reader that stopped early (a limit, a replay that ended) releases the socket now, not when the server is done.
      result.close();
    }
  }

  async insert(table: SqlFragment, rows: readonly Record<string, unknown>[]): Promise<void> {
    for (let start = 0; start < rows.length; start += this.#options.batchRows) {
      const batch = rows.slice(start, start + this.#options.batchRows);
      await this.#guard(`INSERT INTO ${table.text}`, async () =>
        (await this.#connected()).insert({ table: table.text, values: batch as Record<string, unknown>[], format: 'JSONEachRow' }),
      );
    }
  }

  async close(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    if (client) await (await client).close();
  }

  async #guard<T>(query: string, operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw this.#wrap(error, query);
    }
  }

  #wrap(error: unknown, query: string): Error {
    if (error instanceof StoreError) return error;
    if ((error as { name?: string }).name === 'AbortError') return error as Error;
    const code = (error as NodeJS.ErrnoException).code;
    const unreachable = typeof code === 'string' && /^E[A-Z]+$/.test(code);
    const firstLine = errorMessage(error).split('\n')[0] ?? '';
    if (unreachable) {
      return new StoreError(`cannot reach ClickHouse at ${this.url}: ${firstLine || code}`, {
        cause: error,
        hint: 'start the server, or fix store.url in the config',
      });
    }
    const shortQuery = query.replace(/\s+/g, ' ').slice(0, 120);
    return new StoreError(`ClickHouse at ${this.url} refused "${shortQuery}": ${firstLine}`, { cause: error });
  }
}
