/**
 * The example prediction shards over gRPC (the KServe v2 inference protocol):
 * ranking's gRPC client gets the same scores as over HTTP, and a malformed
 * tensor crashes the worker and is recorded with the caller's identity from
 * the call's metadata — what the demo's malformed-tensor step relies on.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { grpcHealth } from '../../core/index.js';
import { startStack } from '../../examples/stack/index.js';
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
    await expect(overGrpc.infer({ ...call, shape: [1, FEATURES], values: values.subarray(0, FEATURES), headers: identity })).rejects.toThrow(/ModelInfer: INTERNAL .*violates the model contract \[3, 16\]/);
    const records = stack.shards[0]!.errorRecords();
    expect(records.at(-1)).toMatchObject({ kind: 'contract-violation', experimentId: 'exp-g', arm: 'treatment', trial: '2', job: 'exp-g.treatment', shard: 'shard-0' });
    expect(stack.shards[1]!.errorRecords()).toEqual([]);
  });
});
