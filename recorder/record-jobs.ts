/**
 * What passes between the recorder and its worker thread (record-thread.ts, record-worker.ts). Buffers arrive on
 * the other side as plain Uint8Arrays (structured clone), so a job's byte fields are made Buffers again on arrival.
 */
import type { CorpusRecord } from '../core/index.js';
import { schemaFromDescriptorSet } from '../net/index.js';
import { Redactor, type RedactionRules } from './redact.js';
import { buildRecord, type CapturedRequest } from './record-builder.js';

export interface RecordThreadSettings {
  readonly tier: string;
  readonly rules: RedactionRules | undefined;
  readonly maxBodyBytes: number;
  /** A serialized FileDescriptorSet: the worker redacts protobuf messages by field name with it. */
  readonly descriptorSet?: Uint8Array;
}

export interface BuildJob {
  readonly id: number;
  readonly request: CapturedRequest;
  readonly sampling: { readonly rate: number; readonly mode: CorpusRecord['sampleMode'] };
}

/** The record, or none when it could not be built (counted as `record-error`). */
export interface BuildResult {
  readonly id: number;
  readonly record?: CorpusRecord;
}

const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** A job's request as the worker received it, its bytes Buffers again. */
export function copiedFromWire(request: CapturedRequest): CapturedRequest {
  const copy = request.grpcCopy;
  return {
    ...request,
    body: asBuffer(request.body),
    ...(copy ? { grpcCopy: { ...copy, ...(copy.responseBody ? { responseBody: asBuffer(copy.responseBody) } : {}) } } : {}),
  };
}

/** Bytes a job holds while it waits: what the recorder's byte budget counts. */
export function bytesOf(request: CapturedRequest): number {
  return request.body.length + (request.grpcCopy?.responseBody?.length ?? 0);
}

/**
 * What turns a job into its result, made once per thread from the recorder's settings: the worker builds with it,
 * and so does the recorder's own thread for the jobs still waiting when it closes (RecordThread.close).
 */
export function jobBuilder(settings: RecordThreadSettings): (job: BuildJob) => BuildResult {
  // The set was read and checked on the recorder's side (loadDescriptorSet); a protobufjs tree does not cross threads.
  const grpcSchema = settings.descriptorSet
    ? schemaFromDescriptorSet(settings.descriptorSet, "the recorder's descriptor set", 'recorder.grpc.descriptors')
    : undefined;
  const redactor = new Redactor(settings.rules, { maxDecodedBytes: settings.maxBodyBytes, ...(grpcSchema ? { grpcSchema } : {}) });
  return (job) => {
    try {
      return { id: job.id, record: buildRecord(settings.tier, redactor, copiedFromWire(job.request), job.sampling, settings.maxBodyBytes) };
    } catch {
      return { id: job.id };
    }
  };
}
