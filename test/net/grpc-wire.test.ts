/** gRPC's own framing and fields, read from hostile bytes: every bad input is a reason, never a throw past the caller or a wrong message. */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  decodeGrpcMessage,
  decodedMessages,
  encodeGrpcMessage,
  frameMessage,
  grpcMethodOf,
  isGrpcContentType,
  parseGrpcTimeout,
  splitMessages,
  uncompressedPayload,
} from '../../net/index.js';

describe('gRPC wire helpers', () => {
  it('splits a body into its messages, and names what is wrong with one that lies', () => {
    const two = Buffer.concat([frameMessage(Buffer.from('one')), frameMessage(Buffer.alloc(0)), frameMessage(Buffer.from('three'), true)]);
    expect(splitMessages(two)).toEqual({
      messages: [
        { compressed: false, payload: Buffer.from('one') },
        { compressed: false, payload: Buffer.alloc(0) },
        { compressed: true, payload: Buffer.from('three') },
      ],
    });
    // A length prefix that promises more than follows.
    const lying = Buffer.concat([frameMessage(Buffer.from('ok')), Buffer.from([0, 0, 0, 0, 9]), Buffer.from('abc')]);
    expect(splitMessages(lying)).toEqual({
      messages: [{ compressed: false, payload: Buffer.from('ok') }],
      problem: "message 2's prefix says 9 bytes, but 3 follow",
    });
    expect(splitMessages(Buffer.from([0, 0, 0])).problem).toBe('3 bytes after the last message are not a message prefix');
    expect(splitMessages(Buffer.from([7, 0, 0, 0, 0])).problem).toBe('message 1 has flag 7 (only 0 and 1 are defined)');
    // Over the limit (gRPC's default receive limit is 4 MiB): refused from the prefix alone, nothing allocated.
    const huge = Buffer.from([0, 0x7f, 0xff, 0xff, 0xff]);
    expect(splitMessages(huge).problem).toBe('message 1 is 2147483647 bytes, over the 4194304-byte limit');
    expect(splitMessages(frameMessage(Buffer.alloc(10)), 5).problem).toBe('message 1 is 10 bytes, over the 5-byte limit');
  });

  it('undoes compression only as the stream declares it, bounded', () => {
    const zipped = { compressed: true, payload: gzipSync(Buffer.from('hello')) };
    expect(uncompressedPayload(zipped, 'gzip').toString()).toBe('hello');
    expect(() => uncompressedPayload(zipped, undefined)).toThrow('a message is flagged compressed, but the stream names no grpc-encoding');
    expect(() => uncompressedPayload(zipped, 'snappy')).toThrow('grpc-encoding "snappy" is not one Tandem can undo (gzip, deflate)');
    const bomb = { compressed: true, payload: gzipSync(Buffer.alloc(1_000_000)) };
    expect(() => uncompressedPayload(bomb, 'gzip', 1_000)).toThrow();
    expect(uncompressedPayload({ compressed: false, payload: Buffer.from('x') }, 'snappy').toString()).toBe('x');
  });

  it('reads content types, method paths, timeouts and status messages strictly', () => {
    expect(['application/grpc', 'application/grpc+proto', 'application/grpc; charset=utf-8'].map(isGrpcContentType)).toEqual([true, true, true]);
    expect(['application/grpc-web', 'application/grpcx', 'text/plain', undefined].map(isGrpcContentType)).toEqual([false, false, false, false]);
    expect(grpcMethodOf('/inference.GRPCInferenceService/ModelInfer')).toEqual({ service: 'inference.GRPCInferenceService', method: 'ModelInfer' });
    for (const path of ['/a/b/c', '/a', '/a.B/', '/../x/y', '/a.B/M?x=1', `/${'a'.repeat(300)}/M`]) expect(grpcMethodOf(path)).toBeUndefined();
    expect([parseGrpcTimeout('200m'), parseGrpcTimeout('1S'), parseGrpcTimeout('2H'), parseGrpcTimeout('500u')]).toEqual([200, 1_000, 7_200_000, 0.5]);
    for (const bad of ['', '200', '123456789S', '-1S', '1s', '1.5S']) expect(parseGrpcTimeout(bad)).toBeUndefined();
    expect(decodeGrpcMessage('no%20item%20%E2%9C%93')).toBe('no item ✓');
    expect(decodeGrpcMessage('100%')).toBe('100%');
    expect(decodeGrpcMessage(encodeGrpcMessage('50% off: "x"\n ✓ \ud800'))).toBe('50% off: "x"\n ✓ \ufffd');
  });

  it('reads a message stream whole for the recorder and the replayer alike: limits kept, messages before a problem kept', () => {
    const gz = (text: string): Buffer => frameMessage(gzipSync(Buffer.from(text)), true);
    const stream = Buffer.concat([gz('one'), gz('two'), gz('three')]);
    expect(decodedMessages(stream, 'gzip').payloads.map(String)).toEqual(['one', 'two', 'three']);
    expect(decodedMessages(stream, 'gzip', { maxMessages: 2 })).toMatchObject({ count: 3, problem: 'more than 2 messages' });
    expect(decodedMessages(stream, 'gzip', { maxMessages: 2 }).payloads.map(String)).toEqual(['one', 'two']);
    // Flagged compressed with no encoding named: the reason, nothing decoded.
    expect(decodedMessages(stream, undefined)).toMatchObject({ payloads: [], count: 3, problem: expect.stringMatching(/names no grpc-encoding/) });
    // Cut off mid-message: the whole messages before it.
    expect(decodedMessages(Buffer.concat([gz('one'), stream.subarray(0, 7)]), 'gzip')).toMatchObject({
      count: 1,
      problem: expect.stringMatching(/prefix says/),
    });
  });
});
