/**
 * Issue 69, finding 4: secrets in gRPC responses were stored (`grpc.responseMessages` kept `{"access_token":"…"}`
 * verbatim). JSON messages, request and response, are now redacted by the same names as every other field, and a
 * method can be recorded without its responses.
 */
import { describe, expect, it } from 'vitest';
import { splitMessages } from '../../net/index.js';
import { grpcCall, grpcUpstream } from '../support/grpc-raw-call.js';
import { records, sidecarFor, tempStore } from '../support/recording.js';

/** Every answer: one JSON message holding a secret, and a protobuf-like one. */
const jsonGrpcUpstream = (): Promise<string> =>
  grpcUpstream([Buffer.from('{"user":"ann","access_token":"SECRETRESPONSE01"}'), Buffer.from([0x0a, 0x03, 0x61, 0x6e, 0x6e])]);

describe('gRPC messages in the corpus', () => {
  it('are redacted by name where they are JSON, request and response, and passed to the client unchanged', async () => {
    const upstream = await jsonGrpcUpstream();
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(upstream, store.corpus, { grpcWithoutResponses: ['acct.Accounts/Export'] });
    const answer = await grpcCall(sidecar.url, '/acct.Accounts/Login', [Buffer.from('{"user":"ann","password":"hunter2"}'), Buffer.from([0x0a, 0x01, 0x61])]);
    // The client sees what the upstream sent, secrets and all.
    expect(answer.toString('latin1')).toContain('SECRETRESPONSE01');
    await grpcCall(sidecar.url, '/acct.Accounts/Export', [Buffer.from([0x0a, 0x01, 0x62])]);
    await recorder.flush();
    const stored = await records(store.corpus);
    const login = stored.find((r) => r.path === '/acct.Accounts/Login')!;
    const sent = splitMessages(Buffer.from(login.body, 'base64')).messages.map((m) => m.payload);
    expect(sent.map((m) => m.toString('latin1'))).toEqual(['{"user":"ann","password":"[redacted]"}', '\n\u0001a']);
    expect(login.grpc!.responseMessages.map((m) => Buffer.from(m, 'base64').toString('latin1'))).toEqual([
      '{"user":"ann","access_token":"[redacted]"}',
      '\n\u0003ann',
    ]);
    expect(login.grpc!.responseTruncated).toBe(false);
    expect(JSON.stringify(stored)).not.toMatch(/SECRETRESPONSE01|hunter2/);
    // A method recorded without its responses: status kept, no messages.
    const exported = stored.find((r) => r.path === '/acct.Accounts/Export')!;
    expect(exported.grpc).toMatchObject({ responseMessages: [], responseTruncated: true, status: 0 });
  });
});
