/**
 * Issue 70, finding 1: a control arm whose server reflection lies killed `tandem replay` — the answer was decoded in
 * the stream's `data` handler, outside any error handling ("invalid tag encoding", "index out of range"), and the
 * experiment stayed `running`. A bad answer is now the conversation's error, which the experiment notes (its gRPC
 * responses are then not compared, with that reason).
 */
import { createServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { frameMessage, reflectDescriptorSet } from '../../net/index.js';

/** A reflection server that answers every request with `answer` and status OK. */
async function lyingReflection(answer: Buffer): Promise<string> {
  const server = createServer();
  server.on('stream', (stream) => {
    stream.on('error', () => undefined);
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.once('data', () => stream.write(frameMessage(answer)));
    stream.on('end', () => stream.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A ServerReflectionResponse (field 4: file_descriptor_response) carrying one "file" of these bytes. */
const responseWithFile = (file: Buffer): Buffer => {
  const inner = Buffer.concat([Buffer.from([0x0a, file.length]), file]);
  return Buffer.concat([Buffer.from([0x22, inner.length]), inner]);
};

describe('server reflection of a peer that lies', () => {
  it.each([
    ['bytes that are not protobuf', Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])],
    ['a file that is not a FileDescriptorProto', responseWithFile(Buffer.from([0x0a, 0x50, 0x61]))],
  ])('answers %s with an error naming what was wrong, and never throws out of the stream', async (_name, answer) => {
    const url = await lyingReflection(answer);
    await expect(reflectDescriptorSet(url, ['tandem.test.Catalog'], 5_000)).rejects.toThrow(/not a ServerReflectionResponse with FileDescriptorProtos/);
  });
});
