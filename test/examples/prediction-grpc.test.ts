/**
 * The example prediction shards over gRPC (the KServe v2 inference protocol):
 * ranking's gRPC client gets the same scores as over HTTP, and a malformed
 * tensor crashes the worker and is recorded with the caller's identity from
 * the call's metadata — what the demo's malformed-tensor step relies on.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseConfig } from '../../core/index.js';
import { grpcHealth } from '../../net/index.js';
import { experimentAttributedDetector } from '../../guardrails/index.js';
import { startStack } from '../../examples/stack/index.js';
import { startCatalogService } from '../../examples/catalog/catalog-service.js';
import { grpcInferenceClient, httpInferenceClient } from '../../examples/stack/inference-client.js';
import { FEATURES } from '../../examples/stack/model.js';

describe('prediction shards over gRPC', () => {
  it('score as over HTTP, report health, and record a malformed tensor with the caller identity', async () => {
    const stack = await startStack({ shards: 2 });
    onTestFinished(() => stack.stop());
    expect(stack.urls.grpcShards).toHaveLength(2);
    const grpcUrl = stack.urls.grpcShards[0]!;
    expect(await grpcHealth(grpcUrl, '', 2_000)).toEqual({ serving: true, status: 'SERVING' });
    const values = Float32Array.from({ length: 3 * FEATURES }, (_, i) => ((i * 7) % 13) / 13);
    const signal = new AbortController().signal;
    const call = { model: 'rank-video', batch: 3, shape: [3, FEATURES], values, headers: {}, signal };
    const overGrpc = grpcInferenceClient(grpcUrl);
    const overHttp = httpInferenceClient(stack.urls.shards[0]!);
    onTestFinished(() => Promise.all([overGrpc.close(), overHttp.close()]).then(() => undefined));
    const [g, h] = await Promise.all([overGrpc.infer(call), overHttp.infer(call)]);
    expect(g.scores).toHaveLength(3);
    expect(g.scores).toEqual(h.scores);
    const identity = { 'x-tandem-experiment': 'exp-g', 'x-tandem-arm': 'treatment', 'x-tandem-trial': '2', 'x-tandem-job': 'exp-g.treatment' };
    await expect(overGrpc.infer({ ...call, shape: [1, FEATURES], values: values.subarray(0, FEATURES), headers: identity })).rejects.toThrow(
      /ModelInfer: INTERNAL .*violates the model contract \[3, 16\]/,
    );
    const records = stack.shards[0]!.errorRecords();
    expect(records.at(-1)).toMatchObject({
      kind: 'contract-violation',
      experimentId: 'exp-g',
      arm: 'treatment',
      trial: '2',
      job: 'exp-g.treatment',
      shard: 'shard-0',
    });
    expect(stack.shards[1]!.errorRecords()).toEqual([]);
    // The attributed detector reads the same records over gRPC (protocol: grpc), in the error-record format.
    const config = parseConfig({
      workloads: [{ name: 'w', tier: 't', detectors: [{ name: 'errors', kind: 'experiment-attributed', protocol: 'grpc', source: grpcUrl, consecutive: 1 }] }],
    }).workloads[0]!.detectors[0]!;
    const detector = experimentAttributedDetector(config, { jobs: { control: 'exp-g.control', treatment: 'exp-g.treatment' }, sinceMs: 0 });
    await detector.prime();
    expect(await detector.check()).toMatchObject({
      verdict: 'violation',
      value: 1,
      message: expect.stringContaining('1 error record(s) from treatment (jobs: exp-g.treatment): contract-violation: rank-video'),
    });
    const other = experimentAttributedDetector(config, { jobs: { control: 'exp-h.control', treatment: 'exp-h.treatment' }, sinceMs: 0 });
    expect(await other.check()).toMatchObject({ verdict: 'clear', value: 0 });
    // A gRPC server without the method is a configuration error at priming, naming it.
    const catalog = await startCatalogService('v1');
    onTestFinished(() => catalog.close());
    const notServing = parseConfig({
      workloads: [{ name: 'w', tier: 't', detectors: [{ name: 'errors', kind: 'experiment-attributed', protocol: 'grpc', source: catalog.url }] }],
    }).workloads[0]!.detectors[0]!;
    await expect(experimentAttributedDetector(notServing, { jobs: {}, sinceMs: 0 }).prime()).rejects.toThrow(
      'does not serve tandem.errors.v1.ErrorRecords/List (UNIMPLEMENTED)',
    );
  });
});
