/**
 * A gRPC upstream for the gRPC benchmark (node:http2, answering as a gRPC
 * server does), whose behaviour each call's request message chooses, so a
 * client knows what a transparent proxy must pass on:
 * - `ok:<text>`: one message echoing the text, trailers with status 0 and a `-bin` metadata value;
 * - `stream:<n>`: n messages, then status 0;
 * - `fail:<text>`: a trailers-only NOT_FOUND with a percent-encoded message;
 * - `reset`: half a message, then RST_STREAM(CANCEL);
 * - `goaway`: the echo, then GOAWAY(NO_ERROR) and a graceful close of the connection.
 * Prints its URL.
 */
import { constants, createServer, type ServerHttp2Stream } from 'node:http2';
import { frameMessage, splitMessages } from '../../net/index.js';

function answer(stream: ServerHttp2Stream, request: string): void {
  const [kind, rest = ''] = request.split(/:(.*)/s);
  const trailers = { 'grpc-status': '0', 'x-shard-bin': Buffer.from([0, 1, 254, 255]).toString('base64'), 'x-served-by': 'chaos' };
  const grpcHeaders = { ':status': 200, 'content-type': 'application/grpc', 'grpc-accept-encoding': 'identity' };
  if (kind === 'fail') {
    stream.respond({ ...grpcHeaders, 'grpc-status': '5', 'grpc-message': encodeURIComponent(`no such item: ${rest}`) }, { endStream: true });
    return;
  }
  if (kind === 'reset') {
    stream.respond(grpcHeaders);
    stream.write(frameMessage(Buffer.from('partial answer')).subarray(0, 8), () => stream.close(constants.NGHTTP2_CANCEL));
    return;
  }
  stream.respond(grpcHeaders, { waitForTrailers: true });
  stream.once('wantTrailers', () => stream.sendTrailers(trailers));
  if (kind === 'stream') {
    const n = Math.min(1_000, Number(rest) || 1);
    for (let i = 0; i < n; i++) stream.write(frameMessage(Buffer.from(`message ${i} `.repeat(1 + (i % 7)))));
    stream.end();
    return;
  }
  stream.end(frameMessage(Buffer.from(`echo ${rest}`)));
  if (kind === 'goaway') {
    const session = stream.session;
    stream.once('close', () => {
      if (session && !session.closed) {
        session.goaway(constants.NGHTTP2_NO_ERROR);
        session.close();
      }
    });
  }
}

const server = createServer({ settings: { maxConcurrentStreams: 1_000 } });
server.on('session', (session) => session.on('error', () => undefined));
server.on('stream', (stream, _headers, flags) => {
  stream.on('error', () => undefined);
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  const handle = (): void => {
    const message = splitMessages(Buffer.concat(chunks)).messages[0]?.payload.toString() ?? '';
    answer(stream, message);
  };
  if ((flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0) handle();
  else stream.once('end', handle);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, pid: process.pid })}\n`);
});
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
