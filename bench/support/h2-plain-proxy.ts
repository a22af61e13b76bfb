/**
 * The baseline the gRPC proxies are measured against: a minimal HTTP/2
 * reverse proxy with node:http2 — every stream piped to one upstream
 * connection, headers, data and trailers passed on, no policy, no recording.
 * Prints its URL and pid.
 */
import { connect, constants, createServer, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';

const upstreamUrl = process.argv[2]!;
let upstream: ClientHttp2Session | undefined;
const session = (): ClientHttp2Session => {
  if (!upstream || upstream.closed || upstream.destroyed) {
    upstream = connect(upstreamUrl);
    upstream.on('error', () => undefined);
    upstream.on('goaway', () => (upstream = undefined));
  }
  return upstream;
};
const passOn = (h: IncomingHttpHeaders): Record<string, string | string[]> => {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && k !== ':authority' && k !== 'connection') out[k] = v as string | string[];
  return out;
};

const server = createServer({ settings: { maxConcurrentStreams: 1_000 } });
server.on('session', (s) => s.on('error', () => undefined));
server.on('stream', (stream, headers, flags) => {
  stream.on('error', () => undefined);
  const end = (flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0;
  const up = session().request({ ...passOn(headers), ':authority': new URL(upstreamUrl).host }, { endStream: end });
  up.on('error', () => undefined);
  if (!end) stream.pipe(up);
  let trailers: IncomingHttpHeaders | undefined;
  up.on('response', (h, f) => {
    const only = (f & constants.NGHTTP2_FLAG_END_STREAM) !== 0;
    stream.respond(passOn(h), { endStream: only, waitForTrailers: !only });
    if (!only) stream.once('wantTrailers', () => (trailers ? stream.sendTrailers(passOn(trailers)) : stream.close()));
  });
  up.on('trailers', (t) => (trailers = t));
  up.pipe(stream);
  up.on('close', () => {
    if (up.rstCode && !stream.destroyed) stream.close(up.rstCode);
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, pid: process.pid })}\n`);
});
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
