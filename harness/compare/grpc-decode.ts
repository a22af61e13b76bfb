/**
 * gRPC responses compared as messages, not bytes: each kept response (its
 * messages length-prefixed, compression undone by the replayer) is decoded
 * with the method's response type and becomes a JSON document —
 * `{ "grpc-status": "NOT_FOUND", "grpc-message": "…", "messages": [{…}, …] }` —
 * which the structural diff, control′ noise cancellation and endpoint
 * grouping then treat exactly as a JSON body. A response that cannot be
 * decoded (no descriptors, an unknown method, bytes that are not its type) is
 * not compared, with its reason: never counted as agreeing.
 */
import { hash } from 'node:crypto';
import { type RequestOutcome } from '../../core/index.js';
import { grpcMethodOf, grpcStatusName, splitMessages, type GrpcSchema } from '../../net/index.js';

const TO_JSON = { longs: String, enums: String, bytes: String, defaults: true, arrays: true, json: true } as const;

function skip(o: RequestOutcome, reason: string): RequestOutcome {
  const { body: _body, ...rest } = o;
  return { ...rest, response: { ...o.response!, skipped: reason } };
}

/** The outcome with its gRPC body as a decoded JSON document; other outcomes unchanged. */
export function decodedGrpcOutcome(o: RequestOutcome, schema: GrpcSchema | undefined): RequestOutcome {
  const grpc = o.response?.grpc;
  if (grpc === undefined || o.response?.skipped !== undefined) return o;
  if (schema === undefined) return skip(o, 'gRPC response, and no descriptors to decode it (harness.responses.grpc)');
  if (o.body === undefined) return skip(o, 'gRPC response larger than the kept size');
  const call = grpcMethodOf(o.response!.path);
  const type = call ? schema.responseType(call.service, call.method) : undefined;
  if (type === undefined) return skip(o, `gRPC method ${o.response!.path.slice(1, 120)} is not in the descriptors`);
  const split = splitMessages(Buffer.from(o.body, 'base64'));
  let messages: unknown[];
  try {
    if (split.problem !== undefined) throw new Error(split.problem);
    messages = split.messages.map((m) => type.toObject(type.decode(m.payload), TO_JSON));
  } catch (error) {
    return skip(o, `gRPC response does not decode as ${type.fullName.replace(/^\./, '')}: ${(error as Error).message.slice(0, 80)}`);
  }
  const document = {
    'grpc-status': grpcStatusName(grpc.status),
    ...(grpc.statusMessage !== '' && grpc.statusMessage !== 'OK' ? { 'grpc-message': grpc.statusMessage } : {}),
    messages,
  };
  const json = Buffer.from(JSON.stringify(document));
  return {
    ...o,
    body: json.toString('base64'),
    response: { ...o.response!, contentType: 'application/json', decodedBytes: json.length, contentHash: hash('sha1', json) },
  };
}
