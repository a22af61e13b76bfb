/**
 * How ranking reaches prediction: HTTP `POST /infer` with a JSON body, or the
 * KServe v2 gRPC `ModelInfer` (prediction-grpc.ts) with the tensor as raw
 * FP32 bytes. Either way the caller's identity, levels and deadline travel
 * with the call (headers, or gRPC metadata), and a failure is a
 * DownstreamError carrying the status ranking reports.
 */
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { DownstreamError, JsonClient } from './json-client.js';
import { encodeTensor } from './model.js';
import { PREDICT_V2_PROTO } from './prediction-grpc.js';

export type InferenceProtocol = 'http' | 'grpc';

export interface InferenceCall {
  readonly model: string;
  readonly batch: number;
  readonly shape: readonly number[];
  readonly values: Float32Array;
  readonly headers: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
}

export interface InferenceClient {
  infer(call: InferenceCall): Promise<{ scores: number[]; level: number }>;
  close(): Promise<void>;
}

export function httpInferenceClient(baseUrl: string): InferenceClient {
  const client = new JsonClient();
  return {
    infer: (call) =>
      client.post(
        `${baseUrl}/infer`,
        { model: call.model, batch: call.batch, shape: call.shape, data: encodeTensor(call.values) },
        { headers: call.headers, signal: call.signal },
      ),
    close: () => client.close(),
  };
}

interface OutputTensor {
  contents?: { fp64_contents?: number[] };
}
interface InferResponse {
  parameters?: Record<string, { int64_param?: number }>;
  outputs?: OutputTensor[];
}
type Stub = grpc.Client & {
  ModelInfer(
    request: unknown,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: (error: grpc.ServiceError | null, response?: InferResponse) => void,
  ): grpc.ClientUnaryCall;
};

export function grpcInferenceClient(baseUrl: string): InferenceClient {
  const loaded = grpc.loadPackageDefinition(loadSync(PREDICT_V2_PROTO, { keepCase: true, defaults: true, longs: Number })) as unknown as {
    inference: { GRPCInferenceService: new (address: string, credentials: grpc.ChannelCredentials) => Stub };
  };
  const stub = new loaded.inference.GRPCInferenceService(new URL(baseUrl).host, grpc.credentials.createInsecure());
  return {
    infer: (call) =>
      new Promise((resolve, reject) => {
        const metadata = new grpc.Metadata();
        for (const [name, value] of Object.entries(call.headers)) metadata.set(name, value);
        const raw = Buffer.alloc(call.values.length * 4);
        for (let i = 0; i < call.values.length; i++) raw.writeFloatLE(call.values[i]!, i * 4);
        const request = {
          model_name: call.model,
          parameters: { batch_size: { int64_param: call.batch } },
          inputs: [{ name: 'input', datatype: 'FP32', shape: call.shape }],
          raw_input_contents: [raw],
        };
        const pending = stub.ModelInfer(request, metadata, { deadline: Date.now() + 10_000 }, (error, response) => {
          call.signal.removeEventListener('abort', cancel);
          if (error)
            return reject(
              new DownstreamError(
                error.code === grpc.status.DEADLINE_EXCEEDED ? 504 : 502,
                `${baseUrl} ModelInfer: ${grpc.status[error.code] ?? error.code} ${error.details}`,
              ),
            );
          resolve({ scores: response?.outputs?.[0]?.contents?.fp64_contents ?? [], level: Number(response?.parameters?.level?.int64_param ?? 0) });
        });
        const cancel = (): void => pending.cancel();
        call.signal.addEventListener('abort', cancel, { once: true });
      }),
    close: async () => stub.close(),
  };
}

export function inferenceClient(baseUrl: string, protocol: InferenceProtocol = 'http'): InferenceClient {
  return protocol === 'grpc' ? grpcInferenceClient(baseUrl) : httpInferenceClient(baseUrl);
}
