/** docs/grpc-call.schema.json is the schema in code, and a call recorded through the sidecar has exactly its shape. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GRPC_CALL_SCHEMA } from '../../recorder/index.js';
import { catalogClient, startCatalog } from '../support/grpc-service.js';
import { pollUntil } from '../support/poll.js';
import { records, sidecarFor, tempStore } from '../support/recording.js';

type Property = { type?: string; const?: unknown; enum?: readonly unknown[]; items?: Property; additionalProperties?: Property; minimum?: number };

/** The checks a JSON Schema of this shape makes, for the keywords it uses. */
function violations(value: unknown, schema: Property & { required?: readonly string[]; properties?: Record<string, Property> }, at = '$'): string[] {
  const out: string[] = [];
  if (schema.const !== undefined && value !== schema.const) out.push(`${at} is not ${String(schema.const)}`);
  if (schema.enum !== undefined && !schema.enum.includes(value)) out.push(`${at} is not one of ${schema.enum.join(', ')}`);
  const type = schema.type;
  if (type === 'integer' && !Number.isInteger(value)) out.push(`${at} is not an integer`);
  if ((type === 'string' || type === 'number' || type === 'boolean') && typeof value !== type) out.push(`${at} is not a ${type}`);
  if (type === 'array') {
    if (!Array.isArray(value)) out.push(`${at} is not an array`);
    else value.forEach((item, i) => out.push(...violations(item, schema.items ?? {}, `${at}[${i}]`)));
  }
  if (type === 'object') {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return [...out, `${at} is not an object`];
    const record = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!(key in record)) out.push(`${at}.${key} is missing`);
    for (const [key, item] of Object.entries(record)) {
      const property = schema.properties?.[key] ?? schema.additionalProperties;
      if (property === undefined) out.push(`${at}.${key} is not in the schema`);
      else out.push(...violations(item, property, `${at}.${key}`));
    }
  }
  if (typeof schema.minimum === 'number' && typeof value === 'number' && value < schema.minimum) out.push(`${at} is below ${schema.minimum}`);
  return out;
}

describe('the recorded gRPC call schema', () => {
  it('is what docs/grpc-call.schema.json says', async () => {
    expect(JSON.parse(await readFile(join(import.meta.dirname, '..', '..', 'docs', 'grpc-call.schema.json'), 'utf8'))).toEqual(GRPC_CALL_SCHEMA);
  });

  it('describes exactly what the sidecar records', async () => {
    const upstream = await startCatalog({ missing: ['x'], trailer: { 'x-served-by': 'one' } });
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(`http://${upstream}`, store.corpus);
    const client = catalogClient(new URL(sidecar.url).host);
    await client.lookup('a', { 'trace-bin': Buffer.from([1, 2]) });
    await client.lookup('x');
    await client.list(2);
    await pollUntil(
      async () => recorder.accounting.sampled,
      (n) => n >= 3,
      { what: 'three recorded calls' },
    );
    await recorder.close();
    const recorded = await records(store.corpus);
    expect(recorded).toHaveLength(3);
    for (const record of recorded) expect(violations(record, GRPC_CALL_SCHEMA as never)).toEqual([]);
    // And the schema is not vacuous: a stored call without its status, or with a numeric trailer, violates it.
    const { status: _status, ...withoutStatus } = recorded[0]!.grpc!;
    expect(violations({ ...recorded[0], grpc: withoutStatus }, GRPC_CALL_SCHEMA as never)).toEqual(['$.grpc.status is missing']);
    expect(violations({ ...recorded[0], grpc: { ...recorded[0]!.grpc, trailers: { ':status': 200 } } }, GRPC_CALL_SCHEMA as never)).toEqual([
      '$.grpc.trailers.:status is not a string',
    ]);
  });
});
