/**
 * A tier of many recorded requests written into ClickHouse by the server itself (INSERT … SELECT FROM
 * numbers()): ten million records in seconds, spread evenly over the hours before now, each a small
 * valid GET as `tandem record` stores it.
 */
import { createClient } from '@clickhouse/client';
import { quoteString } from '../../store/index.js';

export async function fillCorpusTier(url: string, database: string, options: { tier: string; records: number; spanMs: number; endMs: number }): Promise<void> {
  const table = `${database}.corpus`;
  const startMs = options.endMs - options.spanMs;
  const stepMs = options.spanMs / options.records;
  const headers = quoteString(JSON.stringify({ accept: 'application/json', 'user-agent': 'scale-bench' }));
  // 18.16's INSERT … SELECT runs in the server: the client sends one statement, not ten million rows.
  const client = createClient({ url });
  await client.command({
    query: `INSERT INTO ${table} (tier, time, time_ms, id, method, path, headers, body, body_truncated, sample_rate, sample_mode, size_bytes, grpc)
     SELECT ${quoteString(options.tier)}, toDateTime(intDiv(t, 1000)), t, concat('rec-', toString(number)), 'GET', concat('/items/', toString(number % 1000)), ${headers}, '', 0, 0.01, 'uniform', 12, ''
     FROM (SELECT number, toUInt64(${startMs} + floor(number * ${stepMs})) AS t FROM numbers(${options.records}))`,
  });
  await client.close();
}
