/** What the ClickHouse sub-stores share: the connection, the database, and row helpers. */
import type { Clock } from '../../core/index.js';
import { qualified, type SqlFragment } from '../sql.js';
import type { ClickHouseConnection } from './clickhouse-connection.js';
import type { TableName } from './clickhouse-schema.js';

export class Tables {
  constructor(
    readonly connection: ClickHouseConnection,
    readonly database: string,
    /** For the waits the store does itself (a mutation to finish). */
    readonly clock: Clock,
  ) {}

  table(name: TableName): SqlFragment {
    return qualified(this.database, name);
  }
}

/** Epoch ms to the unix seconds of a DateTime column. */
export const seconds = (ms: number): number => Math.floor(ms / 1000);

/** JSON stored in a String column, or `fallback` when it is not JSON. */
export function parseJson<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}
