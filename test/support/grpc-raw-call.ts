import { connect, createServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import { frameMessage } from '../../net/index.js';

/** One gRPC call over a fresh cleartext HTTP/2 connection: the messages framed as sent, the answer's bytes as received. */
export async function grpcCall(url: string, path: string, messages: readonly Buffer[]): Promise<Buffer> {
  const session = connect(url);
  try {
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
    stream.end(Buffer.concat(messages.map((m) => frameMessage(m))));
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    await new Promise((resolve) => stream.once('close', resolve));
    return Buffer.concat(chunks);
  } finally {
    session.close();
  }
}

/** A cleartext gRPC upstream that answers every call with these messages and status OK, after reading its request. */
export async function grpcUpstream(answer: readonly Buffer[]): Promise<string> {
  const server = createServer();
  server.on('stream', (stream) => {
    stream.on('error', () => undefined);
    stream.resume();
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.concat(answer.map((m) => frameMessage(m))));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
