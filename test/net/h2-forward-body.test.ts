/**
 * A request body far larger than HTTP/2's flow-control window passes through forwardStream whole and in order to an
 * upstream that reads it slowly: the body is written by hand with backpressure (not Readable.pipe), so a full
 * upstream pauses the client's stream and its drain resumes it.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { connect, constants, createServer, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { forwardableHeaders, forwardStream } from '../../net/index.js';

const digest = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe('forwardStream', () => {
  it('passes a 16 MiB request body to a slow upstream whole, and its answer back', async () => {
    const upstream = createServer();
    upstream.on('stream', (stream: ServerHttp2Stream) => {
      const hash = createHash('sha256');
      let bytes = 0;
      let chunks = 0;
      stream.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        bytes += chunk.length;
        // A slow reader: every 8th chunk it stops for a turn of the loop.
        if (++chunks % 8 === 0) {
          stream.pause();
          setImmediate(() => stream.resume());
        }
      });
      stream.on('end', () => stream.respond({ ':status': 200, 'x-sha256': hash.digest('hex'), 'x-bytes': String(bytes) }, { endStream: true }));
    });
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    const upstreamSession = connect(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
    const proxy = createServer();
    proxy.on('stream', (stream: ServerHttp2Stream, headers, flags: number) =>
      forwardStream(
        stream,
        forwardableHeaders(headers, (n) => n === ':method' || n === ':path'),
        (flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0,
        upstreamSession,
      ),
    );
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    const client = connect(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
    onTestFinished(() => {
      client.close();
      upstreamSession.close();
      proxy.close();
      upstream.close();
    });

    const body = Buffer.alloc(16 * 1_048_576);
    for (let i = 0; i < body.length; i += 4) body.writeUInt32LE(i, i);
    const request = client.request({ ':method': 'POST', ':path': '/upload' });
    request.end(body);
    const [headers] = (await once(request, 'response')) as [Record<string, string>];
    request.resume();
    await once(request, 'end');
    expect({ status: headers[':status'], bytes: headers['x-bytes'], sha256: headers['x-sha256'] }).toEqual({
      status: 200,
      bytes: String(body.length),
      sha256: digest(body),
    });
  });
});
