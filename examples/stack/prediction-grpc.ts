/**
 * A prediction shard's gRPC interface: the KServe v2 / Open Inference
 * Protocol (protos/grpc_predict_v2.proto) on a @grpc/grpc-js server of its
 * own port — ServerLive, ServerReady, ModelReady and ModelInfer — with the
 * standard health service, server reflection, and its error records as
 * `tandem.errors.v1.ErrorRecords/List`. ModelInfer takes one FP32
 * input tensor `[batch, features]` (in `contents.fp32_contents` or
 * `raw_input_contents`) and the batch size as the request parameter
 * `batch_size`, and evaluates it on the same workers as HTTP `POST /infer`: a
 * tensor that breaks the model contract crashes its worker and is recorded
 * with the caller's identity, read from the call's metadata.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import type { PredictionShard } from './prediction-service.js';
import { HttpError } from './service-host.js';
import { NoWorkerAvailableError, WorkerCrashedError } from './worker-pool.js';

export const PREDICT_V2_PROTO = fileURLToPath(new URL('./protos/grpc_predict_v2.proto', import.meta.url));
const HEALTH_PROTO = fileURLToPath(new URL('../catalog/health.proto', import.meta.url));
/** The error-record format as a gRPC service, from Tandem's guardrails: what its attributed detector reads with `protocol: grpc`. */
const ERROR_RECORDS_PROTO = fileURLToPath(new URL('../../guardrails/detectors/error-records.proto', import.meta.url));

interface Parameter {
  int64_param?: string | number;
  string_param?: string;
  bool_param?: boolean;
}

export interface ModelInferRequest {
  model_name: string;
  id?: string;
  parameters?: Record<string, Parameter>;
  inputs?: { name: string; datatype: string; shape: (string | number)[]; contents?: { fp32_contents?: number[] } }[];
  raw_input_contents?: Buffer[];
}

type Loaded = Record<string, Record<string, Record<string, { service: grpc.ServiceDefinition }>>>;
const definition = loadSync([PREDICT_V2_PROTO, HEALTH_PROTO, ERROR_RECORDS_PROTO], { keepCase: true, defaults: true, enums: String, longs: Number });
const loaded = grpc.loadPackageDefinition(definition) as unknown as Loaded;

/** A gRPC status for a failed evaluation, as the HTTP interface's status for it. */
function statusOf(error: unknown): grpc.StatusObject['code'] {
  if (error instanceof HttpError)
    return error.status === 400 ? grpc.status.INVALID_ARGUMENT : error.status === 503 ? grpc.status.UNAVAILABLE : grpc.status.INTERNAL;
  if (error instanceof WorkerCrashedError) return grpc.status.INTERNAL;
  if (error instanceof NoWorkerAvailableError) return grpc.status.UNAVAILABLE;
  return grpc.status.UNKNOWN;
}

/** The input tensor's values, little-endian FP32 from raw contents or the typed list. */
function valuesOf(request: ModelInferRequest): Float32Array | undefined {
  const raw = request.raw_input_contents?.[0];
  if (raw !== undefined && raw.length > 0) {
    if (raw.length % 4 !== 0) return undefined;
    const values = new Float32Array(raw.length / 4);
    for (let i = 0; i < values.length; i++) values[i] = raw.readFloatLE(i * 4);
    return values;
  }
  const list = request.inputs?.[0]?.contents?.fp32_contents;
  return list === undefined ? undefined : Float32Array.from(list);
}

export interface PredictionGrpcServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startPredictionGrpc(shard: PredictionShard, port = 0, host = '127.0.0.1'): Promise<PredictionGrpcServer> {
  const server = new grpc.Server();
  const observe = (method: string, status: grpc.status, started: number): void =>
    shard.host.observe(`grpc ${method}`, grpc.status[status] ?? String(status), (performance.now() - started) / 1000);
  server.addService((loaded.inference as unknown as Record<string, { service: grpc.ServiceDefinition }>).GRPCInferenceService!.service, {
    ServerLive: (_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<{ live: boolean }>) => callback(null, { live: true }),
    ServerReady: (_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<{ ready: boolean }>) => callback(null, { ready: true }),
    ModelReady: (call: grpc.ServerUnaryCall<{ name: string }, unknown>, callback: grpc.sendUnaryData<{ ready: boolean }>) =>
      callback(null, { ready: /^rank-[a-z]{1,32}$/.test(call.request.name) }),
    ModelInfer(call: grpc.ServerUnaryCall<ModelInferRequest, unknown>, callback: grpc.sendUnaryData<unknown>) {
      const started = performance.now();
      const controller = new AbortController();
      call.on('cancelled', () => controller.abort(new Error('the caller cancelled')));
      const request = shard.host.serviceRequest({
        method: 'POST',
        path: '/inference.GRPCInferenceService/ModelInfer',
        headers: call.metadata.getMap() as Record<string, string>,
        body: undefined,
        signal: controller.signal,
      });
      const input = call.request.inputs?.[0];
      const batch = Number(call.request.parameters?.batch_size?.int64_param ?? input?.shape?.[0] ?? 0);
      void (async () => {
        try {
          if (input === undefined || input.datatype !== 'FP32') throw new HttpError(400, 'one FP32 input tensor is expected');
          const result = await shard.infer(request, { model: call.request.model_name, batch, shape: input.shape.map(Number), values: valuesOf(call.request) });
          observe('ModelInfer', grpc.status.OK, started);
          callback(null, {
            model_name: call.request.model_name,
            id: call.request.id ?? '',
            parameters: { level: { int64_param: result.level }, layers: { int64_param: result.layers }, shard: { string_param: result.shard } },
            outputs: [{ name: 'scores', datatype: 'FP64', shape: [result.scores.length], contents: { fp64_contents: result.scores } }],
          });
        } catch (error) {
          const code = statusOf(error);
          observe('ModelInfer', code, started);
          callback({ code, details: (error as Error).message.slice(0, 500) });
        }
      })();
    },
  });
  server.addService((loaded.grpc!.health! as unknown as Record<string, Record<string, { service: grpc.ServiceDefinition }>>).v1!.Health!.service, {
    Check: (_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<{ status: string }>) => callback(null, { status: 'SERVING' }),
  });
  server.addService((loaded.tandem!.errors! as unknown as Record<string, Record<string, { service: grpc.ServiceDefinition }>>).v1!.ErrorRecords!.service, {
    List(call: grpc.ServerUnaryCall<{ since_ms: number; jobs: string[] }, unknown>, callback: grpc.sendUnaryData<unknown>) {
      const { since_ms: since, jobs } = call.request;
      const records = shard
        .errorRecords()
        .filter((r) => r.timeMs >= since && (jobs.length === 0 || jobs.includes(r.job) || r.jobs.some((j) => jobs.includes(j))));
      callback(null, {
        records: records.map((r) => ({
          time_ms: r.timeMs,
          dependency: r.dependency,
          shard: r.shard,
          kind: r.kind,
          message: r.message,
          experiment_id: r.experimentId,
          arm: r.arm,
          trial: r.trial,
          job: r.job,
          jobs: r.jobs,
        })),
      });
    },
  });
  new ReflectionService(definition).addToServer(server);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (error, p) => (error ? reject(error) : resolve(p))),
  );
  return { url: `http://${host}:${bound}`, close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())) };
}
