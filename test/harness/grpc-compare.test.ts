/**
 * gRPC responses compared as messages: a field changed in one method's
 * response is named under that method, with an example pair; a status
 * mismatch is named; a response that cannot be decoded is counted as not
 * compared with its reason, never as agreeing. Outcomes come from a real
 * paired replay into two @grpc/grpc-js servers.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import 'protobufjs/ext/descriptor.js';
import { describe, expect, it } from 'vitest';
import { systemClock, type CorpusRecord, type RequestOutcome } from '../../core/index.js';
import { compareResponses, loadGrpcSchema, type GrpcSchema } from '../../harness/index.js';
import { pairedReplay } from '../../replayer/index.js';
import { stream } from '../support/corpus.js';
import { CATALOG_PROTO, catalogRecord, startCatalog, type CatalogBehaviour } from '../support/grpc-service.js';
import { tempDir } from '../support/temp-dir.js';

const CONFIG = { ignoreFields: [], noiseRatio: 2 };

async function replayed(control: CatalogBehaviour, treatment: CatalogBehaviour, records: CorpusRecord[]): Promise<RequestOutcome[]> {
  const outcomes: RequestOutcome[] = [];
  const [c, t] = await Promise.all([startCatalog(control), startCatalog(treatment)]);
  await pairedReplay({
    records: stream(records),
    arms: { control: `http://${c}`, treatment: `http://${t}` },
    ratePerSecond: 200,
    concurrency: 64,
    timeoutMs: 4_000,
    warmupMs: 0,
    measureMs: 10_000,
    seed: 3,
    identity: { experimentId: 'exp-c', trial: 0, attempt: 1, headerPrefix: 'x-tandem-', jobs: { control: 'c', treatment: 't' } },
    clock: systemClock,
    keepBodyBytes: 65_536,
    onOutcome: (o) => outcomes.push(o),
  });
  return outcomes;
}

describe('gRPC response comparison', () => {
  it('names a changed field under its method, and a status mismatch, from .proto files', async () => {
    const records = [
      ...Array.from({ length: 6 }, (_, i) => catalogRecord('Lookup', { id: `k${i}` })),
      catalogRecord('Lookup', { id: 'vanishing' }),
      catalogRecord('List', { count: 2 }),
    ];
    const outcomes = await replayed({}, { nameSuffix: ' (v2)', missing: ['vanishing'] }, records);
    const schema = await loadGrpcSchema({ protoFiles: [CATALOG_PROTO] }, '/');
    const result = compareResponses(outcomes, { config: CONFIG, grpcSchema: schema });
    expect(result.pairs).toBe(records.length);
    expect(result.comparedBodies).toBe(records.length);
    const lookup = result.endpoints.find((e) => e.endpoint === 'gRPC tandem.test.Catalog/Lookup')!;
    expect(lookup.differing).toBe(7);
    expect(lookup.statusMismatches).toBe(1);
    expect(lookup.fields.map((f) => f.path)).toEqual(expect.arrayContaining(['messages[].name']));
    // Every pair differs in its name; its score differs only where the treatment answered no message at all.
    expect(lookup.fields.find((f) => f.path === 'messages[].name')?.share).toBe(1);
    expect(lookup.fields.find((f) => f.path === 'messages[].score')?.share).toBeCloseTo(1 / 7);
    expect(lookup.example?.control.body).toContain('"name":"item k');
    expect(lookup.example?.treatment.body).toContain('(v2)');
    expect(result.statusExamples[0]).toMatchObject({ control: 0, treatment: 5 });
    expect(result.fields.find((f) => f.path === 'grpc-status')?.example).toMatchObject({ control: '"OK"', treatment: '"NOT_FOUND"' });
    const list = result.endpoints.find((e) => e.endpoint === 'gRPC tandem.test.Catalog/List')!;
    expect(list).toMatchObject({ pairs: 1, differing: 1, statusMismatches: 0 });
    expect(list.fields.map((f) => f.path)).toEqual(['messages[].name']);
  });

  it('counts responses it cannot decode as not compared, with the reason, never as agreeing', async () => {
    const records = [catalogRecord('Lookup', { id: 'a' }), catalogRecord('Lookup', { id: 'b' })];
    const outcomes = await replayed({}, { nameSuffix: '!' }, records);
    const withoutSchema = compareResponses(outcomes, { config: CONFIG });
    expect(withoutSchema.comparedBodies).toBe(0);
    expect(withoutSchema.skipped).toEqual({ 'gRPC response, and no descriptors to decode it (harness.responses.grpc)': 2 });
    expect(withoutSchema.semanticAgreement).toBeNaN();
    // Descriptors that lack the service.
    const other = protobuf.parse('syntax = "proto3"; package x; service Y { rpc Z (M) returns (M); } message M { string s = 1; }').root;
    const dir = await tempDir();
    const set = join(dir, 'other.binpb');
    const described = other.toDescriptor('proto3');
    await writeFile(set, described.$type.encode(described).finish());
    const unknown: GrpcSchema = await loadGrpcSchema({ descriptorSet: set }, '/');
    const notInSchema = compareResponses(outcomes, { config: CONFIG, grpcSchema: unknown });
    expect(notInSchema.skipped).toEqual({ 'gRPC method tandem.test.Catalog/Lookup is not in the descriptors': 2 });
  });

  it('refuses a descriptor set that does not parse, naming the file', async () => {
    const dir = await tempDir();
    const bad = join(dir, 'broken.binpb');
    await writeFile(bad, Buffer.from('this is not a descriptor set'));
    await expect(loadGrpcSchema({ descriptorSet: bad }, '/')).rejects.toThrow(
      /harness\.responses\.grpc\.descriptorSet: .*broken\.binpb is not a FileDescriptorSet/,
    );
    await expect(loadGrpcSchema({ protoFiles: [join(dir, 'missing.proto')] }, '/')).rejects.toThrow(/protoFiles: cannot load .*missing\.proto/);
  });
});
