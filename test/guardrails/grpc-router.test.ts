/**
 * gRPC through the egress router, with real @grpc/grpc-js clients and
 * servers: only the pinned shard is reached, every call carries the
 * experiment's identity as metadata and baggage, writes are blocked by
 * method (globs, or a descriptor set's idempotency levels) with
 * PERMISSION_DENIED before they reach the dependency, and a call addressed to
 * another host is refused.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import 'protobufjs/ext/descriptor.js';
import type * as grpc from '@grpc/grpc-js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadGrpcSchema } from '../../net/index.js';
import { startRouter } from '../../guardrails/index.js';
import { CATALOG_PROTO, catalogClient, itemFor, startCatalog } from '../support/grpc-service.js';
import { counters, dependencies } from '../support/router-harness.js';
import { tempDir } from '../support/temp-dir.js';

async function shards(n: number): Promise<{ addresses: string[]; calls: string[][]; metadata: grpc.Metadata[] }> {
  const calls: string[][] = [];
  const metadata: grpc.Metadata[] = [];
  const addresses: string[] = [];
  for (let i = 0; i < n; i++) {
    const seen: string[] = [];
    calls.push(seen);
    addresses.push(
      await startCatalog({
        onCall: (method, md) => {
          seen.push(method);
          metadata.push(md);
        },
      }),
    );
  }
  return { addresses, calls, metadata };
}

const hostOf = (url: string): string => new URL(url).host;

describe('the egress router with gRPC', () => {
  it('reaches only the pinned shard, tagged with the experiment identity', async () => {
    const pool = await shards(3);
    const r = await startRouter({
      experimentId: 'exp-g',
      seed: 11,
      dependencies: dependencies([{ name: 'prediction', policy: 'pinned', shards: pool.addresses.map((a) => `http://${a}`), pin: 1, writes: 'allow' }]),
    });
    onTestFinished(() => r.close());
    r.setTrial(4);
    const client = catalogClient(hostOf(r.urls.treatment.prediction!));
    for (let i = 0; i < 6; i++) expect((await client.lookup(`k${i}`, { baggage: 'team=search' })).item).toEqual(itemFor(`k${i}`));
    const reached = pool.calls.map((c) => c.length);
    expect(reached.filter((n) => n > 0)).toEqual([6]);
    const pinned = counters(r, 'treatment', 'prediction').targets!;
    expect(pinned).toHaveLength(1);
    expect(pool.addresses.indexOf(new URL(pinned[0]!).host)).toBe(reached.indexOf(6));
    const md = pool.metadata[0]!;
    expect(md.get('x-tandem-experiment')).toEqual(['exp-g']);
    expect(md.get('x-tandem-arm')).toEqual(['treatment']);
    expect(md.get('x-tandem-trial')).toEqual(['4']);
    expect(String(md.get('baggage')[0])).toBe('team=search,tandem.experiment=exp-g,tandem.arm=treatment,tandem.trial=4,tandem.job=exp-g.treatment');
    expect(counters(r, 'treatment', 'prediction')).toMatchObject({ calls: 6, errors: 0, blocked: 0, refused: 0 });
  });

  it('blocks write methods with PERMISSION_DENIED before they reach the dependency: by glob, by descriptor, and unknown ones by default', async () => {
    const pool = await shards(3);
    const dir = await tempDir();
    const set = join(dir, 'catalog.binpb');
    const described = (await protobuf.load(CATALOG_PROTO)).toDescriptor('proto3');
    await writeFile(set, described.$type.encode(described).finish());
    const deps = dependencies([
      { name: 'by-descriptor', policy: 'isolated', target: `http://${pool.addresses[0]}`, writes: 'block', grpc: { descriptorSet: set } },
      {
        name: 'by-glob',
        policy: 'isolated',
        target: `http://${pool.addresses[1]}`,
        writes: 'block',
        grpc: { readMethods: ['tandem.test.Catalog/*'], writeMethods: ['*.Catalog/Update'] },
      },
      { name: 'unknown', policy: 'isolated', target: `http://${pool.addresses[2]}`, writes: 'block' },
    ]);
    const r = await startRouter({
      experimentId: 'exp-w',
      seed: 1,
      dependencies: deps,
      grpcSchemas: new Map([['by-descriptor', await loadGrpcSchema({ descriptorSet: set }, '/')]]),
    });
    onTestFinished(() => r.close());
    for (const [index, name] of ['by-descriptor', 'by-glob'].entries()) {
      const client = catalogClient(hostOf(r.urls.control[name]!));
      expect((await client.lookup('a')).item).toEqual(itemFor('a'));
      expect((await client.list(2)).items).toHaveLength(2);
      const update = await client.update(itemFor('b'));
      expect(update.error?.code).toBe(7);
      expect(update.error?.details).toBe(`${name}: gRPC method tandem.test.Catalog/Update is a write, and this experiment blocks writes to it`);
      expect(pool.calls[index]).toEqual(['Lookup', 'List']);
      expect(counters(r, 'control', name)).toMatchObject({ calls: 3, blocked: 1 });
    }
    // Nothing says Lookup is safe: every gRPC call is a POST, so it is a write.
    const unknown = catalogClient(hostOf(r.urls.control.unknown!));
    expect((await unknown.lookup('a')).error?.code).toBe(7);
    expect(pool.calls[2]).toEqual([]);
  });

  it('fails over between the pinned shards when one refuses its connection, and never leaves them', async () => {
    const pool = await shards(3);
    const dead = 'http://127.0.0.1:1';
    const r = await startRouter({
      experimentId: 'exp-f',
      seed: 1,
      dependencies: dependencies([
        {
          name: 'prediction',
          policy: 'pinned',
          shards: [dead, ...pool.addresses.map((a) => `http://${a}`)],
          pinned: [dead, `http://${pool.addresses[1]}`],
          writes: 'allow',
        },
      ]),
    });
    onTestFinished(() => r.close());
    const client = catalogClient(hostOf(r.urls.control.prediction!));
    for (let i = 0; i < 4; i++) expect((await client.lookup(`f${i}`)).item).toEqual(itemFor(`f${i}`));
    expect(pool.calls.map((c) => c.length)).toEqual([0, 4, 0]);
    const seen = counters(r, 'control', 'prediction');
    expect(seen.byTarget![dead]).toBeGreaterThan(0);
    expect(seen).toMatchObject({ calls: 4, errors: 0 });
  });

  it("cancels a call that outlives the dependency's timeout, and counts it as an error", async () => {
    const slow = await startCatalog({ slow: { ids: ['slow'], delayMs: 10_000 } });
    const r = await startRouter({
      experimentId: 'exp-t',
      seed: 1,
      dependencies: dependencies([{ name: 'prediction', policy: 'isolated', target: `http://${slow}`, writes: 'allow', timeout: '300ms' }]),
    });
    onTestFinished(() => r.close());
    const client = catalogClient(hostOf(r.urls.control.prediction!));
    // Without the timeout the service answers after 10 s, and the call succeeds.
    const answer = await client.lookup('slow');
    expect(answer.error).toBeDefined();
    expect((await client.lookup('fast')).item).toEqual(itemFor('fast'));
    expect(counters(r, 'control', 'prediction')).toMatchObject({ calls: 2, errors: 1 });
  });

  it('refuses a call addressed to another host', async () => {
    const pool = await shards(1);
    const r = await startRouter({
      experimentId: 'exp-h',
      seed: 1,
      dependencies: dependencies([{ name: 'prediction', policy: 'isolated', target: `http://${pool.addresses[0]}`, writes: 'allow' }]),
    });
    onTestFinished(() => r.close());
    const client = catalogClient(hostOf(r.urls.control.prediction!), { 'grpc.default_authority': 'prediction.prod.internal:443' });
    const answer = await client.lookup('a');
    expect(answer.error?.code).toBe(7);
    expect(answer.error?.details).toBe('prediction: Host prediction.prod.internal:443 is not this dependency');
    expect(pool.calls[0]).toEqual([]);
    expect(counters(r, 'control', 'prediction')).toMatchObject({ refused: 1 });
  });
});
