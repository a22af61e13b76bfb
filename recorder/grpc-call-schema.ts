/**
 * The JSON Schema of a recorded gRPC call (a corpus record's `grpc` part, core/model.ts `GrpcCall`).
 * docs/grpc-call.schema.json is this object; test/recorder/grpc-call-schema.test.ts holds the two equal and
 * checks a call recorded through the sidecar against it, so the documented shape is the stored one.
 */
const base64 = { type: 'string', contentEncoding: 'base64' } as const;

export const GRPC_CALL_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'Tandem recorded gRPC call (a corpus record with its `grpc` part)',
  type: 'object',
  required: ['id', 'tier', 'timeMs', 'method', 'path', 'headers', 'body', 'bodyTruncated', 'sampleRate', 'sampleMode', 'grpc'],
  properties: {
    id: { type: 'string', description: 'Unique id (UUID) assigned when sampled.' },
    tier: { type: 'string' },
    timeMs: { type: 'number', description: 'When the call arrived, epoch ms.' },
    method: { const: 'POST' },
    path: { type: 'string', pattern: '^/[A-Za-z_][\\w.]*/[A-Za-z_]\\w*$', description: '/package.Service/Method' },
    headers: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description:
        'Request metadata, lower-case, redacted like HTTP headers (authorization, cookies, secret names); `-bin` values are the base64 they are on the wire.',
    },
    body: { ...base64, description: 'The request messages, length-prefixed (flag byte, 4-byte length) exactly as sent.' },
    bodyTruncated: { type: 'boolean', description: 'The request was over the recorder body limit and is not stored; replay skips it.' },
    sampleRate: { type: 'number' },
    sampleMode: { enum: ['uniform', 'sticky', 'import', 'mirror'] },
    grpc: {
      type: 'object',
      required: ['service', 'method', 'requestMessages', 'responseMessages', 'responseTruncated', 'status', 'statusMessage', 'trailers'],
      additionalProperties: false,
      properties: {
        service: { type: 'string', description: 'package.Service' },
        method: { type: 'string', description: 'The method name within its service.' },
        requestMessages: { type: 'integer', minimum: 0, description: 'Messages in the request body.' },
        responseMessages: {
          type: 'array',
          items: base64,
          description: "Each response message's payload, compression undone; one for a unary call, all of a server stream.",
        },
        responseTruncated: {
          type: 'boolean',
          description: 'Not every response message is kept: over the body limit, an undecodable compression, or a stream that ended mid-message.',
        },
        status: { type: 'integer', minimum: -1, description: 'grpc-status; -1 when the call ended without one (a reset stream, a dead upstream).' },
        statusMessage: { type: 'string', description: 'grpc-message, percent-decoded.' },
        trailers: {
          type: 'object',
          additionalProperties: { type: 'string' },
          description: 'Response trailers (or the headers of a trailers-only response), redacted like request headers.',
        },
      },
    },
  },
} as const;
