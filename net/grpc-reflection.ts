/**
 * A service's descriptors from the service itself, by gRPC server reflection
 * (grpc/doc/server-reflection.md): for each service, `file_containing_symbol`
 * on one bidirectional stream, then `file_by_filename` for any import the
 * server did not send with it, until every file's imports are known. The
 * files make a FileDescriptorSet, read as any other (grpc-schema.ts). v1 is
 * asked first; a server that only has v1alpha answers UNIMPLEMENTED and is
 * asked that instead. Bounded: a deadline, and at most MAX_FILES files.
 */
import { connect, constants, type ClientHttp2Stream } from 'node:http2';
import protobuf from 'protobufjs';
import { decodeGrpcMessage, frameMessage, grpcStatusName } from './grpc-wire.js';

const MAX_FILES = 500;
const MAX_RESPONSE_BYTES = 64 * 1_048_576;

/** The messages of grpc/reflection/v1/reflection.proto this uses (v1alpha has the same fields). */
const reflection = protobuf.Root.fromJSON({
  nested: {
    Request: { fields: { host: { type: 'string', id: 1 }, fileByFilename: { type: 'string', id: 3 }, fileContainingSymbol: { type: 'string', id: 4 } } },
    Response: {
      fields: {
        fileDescriptorResponse: { type: 'FileDescriptorResponse', id: 4 },
        errorResponse: { type: 'ErrorResponse', id: 7 },
      },
      nested: {
        FileDescriptorResponse: { fields: { fileDescriptorProto: { rule: 'repeated', type: 'bytes', id: 1 } } },
        ErrorResponse: { fields: { errorCode: { type: 'int32', id: 1 }, errorMessage: { type: 'string', id: 2 } } },
      },
    },
  },
});
const Request = reflection.lookupType('Request');
const Response = reflection.lookupType('Response');
/** `name` (1) and `dependency` (3) of google.protobuf.FileDescriptorProto: what is needed to follow imports. */
const FileHeader = protobuf.Root.fromJSON({
  nested: { FileHeader: { fields: { name: { type: 'string', id: 1 }, dependency: { rule: 'repeated', type: 'string', id: 3 } } } },
}).lookupType('FileHeader');

/** FileDescriptorSet: field 1, repeated FileDescriptorProto — the files written as received, as bytes. */
const DescriptorSet = protobuf.Root.fromJSON({ nested: { DescriptorSet: { fields: { file: { rule: 'repeated', type: 'bytes', id: 1 } } } } }).lookupType(
  'DescriptorSet',
);

type Decoded = { fileDescriptorResponse?: { fileDescriptorProto?: Uint8Array[] }; errorResponse?: { errorCode?: number; errorMessage?: string } };

class ReflectionError extends Error {
  constructor(
    message: string,
    readonly unimplemented = false,
  ) {
    super(message);
  }
}

/** One reflection conversation on one stream: ask, read answers in order. */
function conversation(url: string, path: string, services: readonly string[], deadline: number): Promise<Uint8Array[]> {
  return new Promise((resolve, reject) => {
    const session = connect(url, { settings: { enablePush: false } });
    const files = new Map<string, Uint8Array>();
    const asked = new Set<string>();
    let pending = 0;
    let buffered: Buffer = Buffer.alloc(0);
    let received = 0;
    let stream: ClientHttp2Stream | undefined;
    let settled = false;
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      session.destroy();
      if (error) reject(error);
      else resolve([...files.values()]);
    };
    const timer = setTimeout(() => finish(new ReflectionError(`no complete answer from ${url} within the deadline`)), Math.max(1, deadline - Date.now()));
    const ask = (request: Record<string, string>): void => {
      pending++;
      stream!.write(frameMessage(Request.encode(request).finish()));
    };
    const askForImports = (): void => {
      for (const bytes of files.values()) {
        for (const dependency of (FileHeader.toObject(FileHeader.decode(bytes)) as { dependency?: string[] }).dependency ?? []) {
          if (files.has(dependency) || asked.has(dependency) || files.size + asked.size >= MAX_FILES) continue;
          asked.add(dependency);
          ask({ fileByFilename: dependency });
        }
      }
      if (pending === 0) stream!.end();
    };
    const onMessage = (payload: Buffer): void => {
      pending--;
      const answer = Response.toObject(Response.decode(payload), { bytes: Uint8Array }) as Decoded;
      if (answer.errorResponse)
        return finish(
          new ReflectionError(`reflection answered ${grpcStatusName(answer.errorResponse.errorCode ?? 2)}: ${answer.errorResponse.errorMessage ?? ''}`),
        );
      for (const bytes of answer.fileDescriptorResponse?.fileDescriptorProto ?? []) {
        const name = (FileHeader.toObject(FileHeader.decode(bytes)) as { name?: string }).name ?? `(unnamed ${files.size})`;
        if (files.size < MAX_FILES) files.set(name, bytes);
      }
      if (pending === 0) askForImports();
    };
    session.on('error', (error) => finish(error));
    stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
    let ending: Record<string, unknown> | undefined;
    stream.on('response', (headers) => {
      if (headers['grpc-status'] !== undefined) ending = headers;
    });
    stream.on('trailers', (trailers) => (ending = trailers));
    stream.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > MAX_RESPONSE_BYTES) return finish(new ReflectionError(`reflection answer over ${MAX_RESPONSE_BYTES} bytes`));
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      // The server's bytes are input: an answer that is not a reflection response, or a file that is not a
      // FileDescriptorProto, ends the conversation with an error saying so, never an exception in this handler.
      try {
        while (!settled && buffered.length >= 5 && buffered.length >= 5 + buffered.readUInt32BE(1)) {
          const length = buffered.readUInt32BE(1);
          const payload = buffered.subarray(5, 5 + length);
          buffered = buffered.subarray(5 + length);
          onMessage(payload);
        }
      } catch (error) {
        finish(
          new ReflectionError(`the reflection answer is not a ServerReflectionResponse with FileDescriptorProtos (${(error as Error).message.slice(0, 120)})`),
        );
      }
    });
    stream.on('error', () => undefined);
    stream.on('close', () => {
      const status = ending?.['grpc-status'];
      if (status !== undefined && status !== '0') {
        const code = Number(status);
        return finish(
          new ReflectionError(`reflection answered ${grpcStatusName(code)}: ${decodeGrpcMessage(ending?.['grpc-message'] as string | undefined)}`, code === 12),
        );
      }
      if (stream!.rstCode !== undefined && stream!.rstCode !== constants.NGHTTP2_NO_ERROR && pending > 0)
        return finish(new ReflectionError(`reflection stream reset (code ${stream!.rstCode})`));
      finish();
    });
    for (const service of services) ask({ fileContainingSymbol: service });
  });
}

/** A serialized FileDescriptorSet of `services` and everything they import, asked of the server at `url`. */
export async function reflectDescriptorSet(url: string, services: readonly string[], timeoutMs: number): Promise<Uint8Array> {
  const deadline = Date.now() + timeoutMs;
  let files: Uint8Array[];
  try {
    files = await conversation(url, '/grpc.reflection.v1.ServerReflection/ServerReflectionInfo', services, deadline);
  } catch (error) {
    if (!(error instanceof ReflectionError) || !error.unimplemented) throw error;
    files = await conversation(url, '/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo', services, deadline);
  }
  return DescriptorSet.encode({ file: files }).finish();
}
