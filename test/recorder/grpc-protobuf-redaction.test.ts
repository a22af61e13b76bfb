/**
 * Issue 69, finding 4, for protobuf: without descriptors a protobuf message has no field names, so its secrets were
 * stored as sent. With the services' descriptors (`recorder.grpc.descriptors`) request and response messages are
 * redacted by field name like JSON, on the wire: every other byte, unknown fields included, stays as it was.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import 'protobufjs/ext/descriptor.js';
import { describe, expect, it } from 'vitest';
import { grpcSchemaOf, splitMessages } from '../../net/index.js';
import { Redactor } from '../../recorder/index.js';
import { runCli } from '../support/cli.js';
import { grpcCall, grpcUpstream } from '../support/grpc-raw-call.js';
import { records, sidecarFor, tempStore } from '../support/recording.js';
import { tempDir } from '../support/temp-dir.js';

const PROTO = `
syntax = "proto3";
package acct;
service Accounts { rpc Login (LoginRequest) returns (Session); }
message Device { string model = 1; string api_key = 2; }
message LoginRequest {
  string user = 1;
  string password = 2;
  map<string, string> metadata = 3;
  Device device = 4;
  int64 secret = 5;
  repeated Device devices = 6;
  Node tree = 7;
}
message Session { string user = 1; string accessToken = 2; bytes token = 3; }
message Node { Node child = 1; string token = 2; }
`;

const root = protobuf.parse(PROTO, { keepCase: true }).root;
root.resolveAll();
const LoginRequest = root.lookupType('acct.LoginRequest');
const Session = root.lookupType('acct.Session');
const Node = root.lookupType('acct.Node');
const described = root.toDescriptor('proto3');
const descriptorSet = described.$type.encode(described).finish();
/** As the recorder's worker reads the set: protobufjs camel-cases its field names. */
const schemaFromSet = grpcSchemaOf(protobuf.Root.fromDescriptor(descriptorSet));
const redactor = new Redactor({}, { grpcSchema: schemaFromSet });
const LOGIN = { service: 'acct.Accounts', method: 'Login' } as const;

const login = Buffer.from(
  LoginRequest.encode({
    user: 'ann',
    password: 'hunter2',
    metadata: { token: 'MAPSECRET', region: 'eu' },
    device: { model: 'x1', api_key: 'DEVICEKEY' },
    secret: 4242,
    devices: [{ model: 'a', api_key: 'K1' }, { model: 'b' }],
    tree: { child: { child: { token: 'DEEPTOKEN' } } },
  }).finish(),
);

describe('protobuf messages redacted with descriptors', () => {
  it('replace the value of every secret-named field, at any depth, in map entries and repeated messages, and zero a secret number', () => {
    const redacted = redactor.grpcMessage(login, 'application/grpc', { ...LOGIN, direction: 'request' });
    expect(redacted.withheld).toBeUndefined();
    const decoded = LoginRequest.decode(redacted.body!);
    // The secret number is still on the wire, as 0 (toObject leaves a default out).
    expect([Number((decoded as unknown as { secret: number }).secret), redacted.body!.includes(Buffer.from([0x28, 0x00]))]).toEqual([0, true]);
    expect(LoginRequest.toObject(decoded, { longs: Number })).toEqual({
      user: 'ann',
      password: '[redacted]',
      metadata: { token: '[redacted]', region: 'eu' },
      device: { model: 'x1', api_key: '[redacted]' },
      devices: [{ model: 'a', api_key: '[redacted]' }, { model: 'b' }],
      tree: { child: { child: { token: '[redacted]' } } },
    });
    // Names as declared or camel-cased (accessToken is access_token); a bytes field too.
    const session = Buffer.from(Session.encode({ user: 'ann', accessToken: 'SESSIONSECRET', token: Buffer.from('RAW') }).finish());
    const answer = redactor.grpcMessage(session, 'application/grpc+proto', { ...LOGIN, direction: 'response' });
    expect(Session.toObject(Session.decode(answer.body!), { bytes: String })).toEqual({
      user: 'ann',
      accessToken: '[redacted]',
      token: Buffer.from('[redacted]').toString('base64'),
    });
  });

  it('keeps every other byte, unknown fields included, and returns a message without secrets as it came', () => {
    const unknownField = Buffer.from([0x7a, 0x03, 0x61, 0x62, 0x63]); // field 15, "abc": not in the descriptors
    const withUnknown = Buffer.concat([Buffer.from(LoginRequest.encode({ user: 'ann', password: 'pw' }).finish()), unknownField]);
    const redacted = redactor.grpcMessage(withUnknown, 'application/grpc', { ...LOGIN, direction: 'request' }).body!;
    expect(redacted.toString('hex')).toBe(
      Buffer.concat([Buffer.from(LoginRequest.encode({ user: 'ann', password: '[redacted]' }).finish()), unknownField]).toString('hex'),
    );
    const clean = Buffer.from(LoginRequest.encode({ user: 'ann', device: { model: 'x1' } }).finish());
    expect(redactor.grpcMessage(clean, 'application/grpc', { ...LOGIN, direction: 'request' }).body).toBe(clean);
    // A method the descriptors do not declare, and a recorder without descriptors: stored as sent.
    expect(redactor.grpcMessage(login, 'application/grpc', { service: 'acct.Other', method: 'Login', direction: 'request' }).body).toBe(login);
    expect(new Redactor().grpcMessage(login, 'application/grpc', { ...LOGIN, direction: 'request' }).body).toBe(login);
  });

  it('withholds a message that is not one of its type, and one nested deeper than any schema needs, without overflowing the stack', () => {
    const cut = login.subarray(0, login.length - 3);
    expect(redactor.grpcMessage(cut, 'application/grpc', { ...LOGIN, direction: 'request' }).withheld).toMatch(/not a acct\.LoginRequest message/);
    // 10,000 nested Nodes: each level is a length-prefixed field 1 of the next.
    let deep = Buffer.from(Node.encode({ token: 'x' }).finish());
    for (let i = 0; i < 10_000; i++) deep = Buffer.concat([Buffer.from([0x0a]), Buffer.from(protobuf.Writer.create().uint32(deep.length).finish()), deep]);
    const tree = Buffer.concat([Buffer.from([0x3a]), Buffer.from(protobuf.Writer.create().uint32(deep.length).finish()), deep]);
    expect(redactor.grpcMessage(tree, 'application/grpc', { ...LOGIN, direction: 'request' }).withheld).toMatch(/nested deeper than/);
  });
});

/** Every call answered with a Session holding a token. */
const protobufUpstream = (): Promise<string> => grpcUpstream([Buffer.from(Session.encode({ user: 'ann', accessToken: 'SECRETRESPONSE02' }).finish())]);

describe('the recording sidecar with descriptors', () => {
  it('stores the call with its protobuf secrets redacted, request and response, and passes the client what the upstream sent', async () => {
    const upstream = await protobufUpstream();
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(upstream, store.corpus, { grpcDescriptorSet: descriptorSet });
    const answer = await grpcCall(sidecar.url, '/acct.Accounts/Login', [login]);
    expect(answer.toString('latin1')).toContain('SECRETRESPONSE02');
    await recorder.flush();
    const [stored] = await records(store.corpus);
    const request = splitMessages(Buffer.from(stored!.body, 'base64')).messages.map((m) =>
      LoginRequest.toObject(LoginRequest.decode(m.payload), { longs: Number }),
    );
    expect(request).toMatchObject([{ user: 'ann', password: '[redacted]', metadata: { token: '[redacted]' }, device: { api_key: '[redacted]' } }]);
    const response = stored!.grpc!.responseMessages.map((m) => Session.toObject(Session.decode(Buffer.from(m, 'base64'))));
    expect(response).toEqual([{ user: 'ann', accessToken: '[redacted]' }]);
    const everyByte = Buffer.concat([Buffer.from(stored!.body, 'base64'), ...stored!.grpc!.responseMessages.map((m) => Buffer.from(m, 'base64'))]).toString(
      'latin1',
    );
    expect(everyByte).not.toMatch(/hunter2|MAPSECRET|DEVICEKEY|DEEPTOKEN|SECRETRESPONSE02/);
  });

  it('is configured by recorder.grpc.descriptors, and a descriptor file that cannot be read exits 3 naming the key', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'tandem.config.yaml'), 'recorder: { grpc: { descriptors: { descriptorSet: missing.binpb } } }\n');
    const missing = await runCli(['record', '--tier', 'query', '--listen', ':0', '--upstream', 'http://127.0.0.1:9', '--rate', '1'], { cwd: dir });
    expect(missing.code).toBe(3);
    expect(missing.err).toMatch(/recorder\.grpc\.descriptors\.descriptorSet: cannot read .*missing\.binpb/);
    await writeFile(join(dir, 'broken.binpb'), 'not a descriptor set');
    await writeFile(join(dir, 'tandem.config.yaml'), 'recorder: { grpc: { descriptors: { descriptorSet: broken.binpb } } }\n');
    const broken = await runCli(['record', '--tier', 'query', '--listen', ':0', '--upstream', 'http://127.0.0.1:9', '--rate', '1'], { cwd: dir });
    expect(broken.code).toBe(3);
    expect(broken.err).toMatch(/recorder\.grpc\.descriptors\.descriptorSet: .*broken\.binpb is not a FileDescriptorSet/);
  });
});
