/**
 * The HTTP/2 header limits of every session on a call's path that Tandem accepts or opens (the recording sidecar,
 * the egress router, the replayer). A proxy must pass what its client and upstream accept, and Node's defaults are
 * lower than the common gRPC stacks: 128 header pairs, a 64 KiB header list received and a 64 KiB header block sent,
 * where grpc-go accepts a 16 MiB header list on clients and servers (internal/transport/defaults.go) and counts no
 * pairs. Every pair costs at least 32 bytes of the list (RFC 9113 §6.5.2), so the pair limit is what the list holds.
 * Memory stays bounded by each session's maxSessionMemory: past it, Node refuses new streams.
 */
import type { ClientSessionOptions, ServerOptions } from 'node:http2';
import { transportLimits } from './transport-limits.js';

type HeaderLimits = Pick<ServerOptions & ClientSessionOptions, 'maxHeaderListPairs' | 'maxSendHeaderBlockLength'> & { settings: { maxHeaderListSize: number } };

/**
 * The process's limits (net/transport-limits.ts), merged into a session's own options (its settings kept). The pair
 * limit is as many pairs as a list of that size can hold (32 bytes of overhead each).
 */
export function withHeaderLimits<T extends { settings?: object }>(options: T): T & HeaderLimits {
  const bytes = transportLimits().http2.maxHeaderListBytes;
  return {
    ...options,
    maxHeaderListPairs: Math.floor(bytes / 32),
    maxSendHeaderBlockLength: bytes,
    settings: { ...options.settings, maxHeaderListSize: bytes },
  };
}
