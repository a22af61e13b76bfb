/**
 * The recorder-h2 bench's upstream, cleartext HTTP/2: `/bench.Big/Answer` answers a gRPC call with 40,000
 * gzip-flagged messages (about 1 MB, made once), any other path a small gRPC answer; `GET /count` says how many
 * streams it has been opened (the flood's reach). Prints its URL and pid.
 */
import { createServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

function framed(payload: Buffer, compressed: boolean): Buffer {
  const prefix = Buffer.alloc(5);
  prefix[0] = compressed ? 1 : 0;
  prefix.writeUInt32BE(payload.length, 1);
  return Buffer.concat([prefix, payload]);
}

// One gzip member of one byte, repeated: 26 bytes a message, 1.04 MB in all, just under the recorder's 1 MiB body
// limit, so the sidecar keeps and decompresses every one.
const member = gzipSync(Buffer.from('a'));
const BIG = Buffer.concat(Array.from({ length: 40_000 }, () => framed(member, true)));
const SMALL = framed(Buffer.from('small'), false);

let streams = 0;
const server = createServer({ settings: { maxConcurrentStreams: 10_000 } });
server.on('session', (session) => session.on('error', () => undefined));
server.on('stream', (stream, headers) => {
  stream.on('error', () => undefined);
  if (headers[':path'] === '/count') {
    stream.respond({ ':status': 200, 'content-type': 'application/json' });
    stream.end(JSON.stringify({ streams }));
    return;
  }
  streams++;
  stream.resume();
  stream.on('end', () => {
    if (stream.destroyed) return;
    const big = headers[':path'] === '/bench.Big/Answer';
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', ...(big ? { 'grpc-encoding': 'gzip' } : {}) }, { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(big ? BIG : SMALL);
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, pid: process.pid, bigBytes: BIG.length })}\n`);
});
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
