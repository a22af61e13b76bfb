/**
 * grpc.health.v1.Health/Check, the health protocol gRPC servers and
 * Kubernetes probes speak: the serving status of a service ('' for the whole
 * server). Used by the grpc-health detector and the `grpc-health` readiness
 * probe of deployed arms.
 */
import protobuf from 'protobufjs';
import { grpcStatusName } from './grpc-wire.js';
import { grpcUnaryCall } from './grpc-unary.js';

/** The two messages of grpc/health/v1/health.proto that Check uses. */
const health = protobuf.Root.fromJSON({
  nested: {
    HealthCheckRequest: { fields: { service: { type: 'string', id: 1 } } },
    HealthCheckResponse: {
      fields: { status: { type: 'ServingStatus', id: 1 } },
      nested: { ServingStatus: { values: { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } } },
    },
  },
});
const Request = health.lookupType('HealthCheckRequest');
const Response = health.lookupType('HealthCheckResponse');
const STATUS_NAMES = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

export const HEALTH_CHECK_PATH = '/grpc.health.v1.Health/Check';

/** The serving status of `service` ('' for the whole server); throws when the dependency cannot be reached. */
export async function grpcHealth(url: string, service: string, timeoutMs: number): Promise<{ serving: boolean; status: string }> {
  const answer = await grpcUnaryCall(url, HEALTH_CHECK_PATH, Request.encode({ service }).finish(), timeoutMs);
  if (answer.status !== 0)
    return { serving: false, status: `${grpcStatusName(answer.status)}${answer.message !== '' ? ` (${answer.message.slice(0, 200)})` : ''}` };
  const decoded = answer.payload ? (Response.toObject(Response.decode(answer.payload)) as { status?: number }) : {};
  const status = STATUS_NAMES[decoded.status ?? 0] ?? `status ${decoded.status}`;
  return { serving: status === 'SERVING', status };
}
