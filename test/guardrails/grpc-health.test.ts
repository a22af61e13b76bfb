/** The gRPC health detector against a real @grpc/grpc-js server implementing grpc.health.v1.Health. */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseConfig, type DetectorConfig } from '../../core/index.js';
import { grpcHealthDetector } from '../../guardrails/index.js';

const HEALTH_PROTO = fileURLToPath(new URL('../../examples/catalog/health.proto', import.meta.url));

function detector(config: Record<string, unknown>): DetectorConfig {
  return parseConfig({ workloads: [{ name: 'w', tier: 't', detectors: [{ name: 'd', kind: 'grpc-health', ...config }] }] }).workloads[0]!.detectors[0]!;
}

/** A health service whose answers the test sets: a status per service name, or an error. */
async function healthServer(statuses: Map<string, string>): Promise<string> {
  const loaded = grpc.loadPackageDefinition(loadSync(HEALTH_PROTO, { keepCase: true, enums: String, defaults: true })) as any;
  const server = new grpc.Server();
  server.addService(loaded.grpc.health.v1.Health.service, {
    Check(call: grpc.ServerUnaryCall<{ service: string }, unknown>, callback: grpc.sendUnaryData<{ status: string }>) {
      const status = statuses.get(call.request.service);
      if (status === undefined) return callback({ code: grpc.status.NOT_FOUND, details: `unknown service ${call.request.service}` });
      callback(null, { status });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, p) => (error ? reject(error) : resolve(p))),
  );
  onTestFinished(() => new Promise<void>((resolve) => server.tryShutdown(() => resolve())));
  return `http://127.0.0.1:${port}`;
}

describe('the gRPC health detector', () => {
  it('is clear while the service is SERVING, a violation otherwise, and an error when the server cannot be reached', async () => {
    const statuses = new Map([
      ['', 'SERVING'],
      ['inference.GRPCInferenceService', 'SERVING'],
    ]);
    const url = await healthServer(statuses);
    const whole = grpcHealthDetector(detector({ source: url, interval: '1s' }));
    const one = grpcHealthDetector(detector({ source: url, interval: '1s', rule: { service: 'inference.GRPCInferenceService' } }));
    await whole.prime();
    expect(await whole.check()).toMatchObject({ verdict: 'clear', value: 0, message: 'server SERVING' });
    expect(await one.check()).toMatchObject({ verdict: 'clear' });
    statuses.set('inference.GRPCInferenceService', 'NOT_SERVING');
    expect(await one.check()).toMatchObject({ verdict: 'violation', value: 1, message: 'inference.GRPCInferenceService NOT_SERVING' });
    expect(await whole.check()).toMatchObject({ verdict: 'clear' });
    const unknown = grpcHealthDetector(detector({ source: url, rule: { service: 'nope' } }));
    expect(await unknown.check()).toMatchObject({ verdict: 'violation', message: 'nope NOT_FOUND (unknown service nope)' });
    const gone = grpcHealthDetector(detector({ source: 'http://127.0.0.1:1', interval: '1s' }));
    expect(await gone.check()).toMatchObject({ verdict: 'error', value: null });
  });
});
