/**
 * The HTTP/2 header limits of every session on a call's path that Tandem accepts or opens (the recording sidecar,
 * the egress router, the replayer). A proxy must pass what its client and upstream accept, and Node's defaults are
 * lower than the common gRPC stacks: 128 header pairs, a 64 KiB header list received and a 64 KiB header block sent,
 * where grpc-go accepts a 16 MiB header list on clients and servers (internal/transport/defaults.go) and counts no
 * pairs. Every pair costs at least 32 bytes of the list (RFC 9113 §6.5.2), so the pair limit is what the list holds.
 * Memory stays bounded by each session's maxSessionMemory: past it, Node refuses new streams.
 */
import type { ClientSessionOptions, ServerOptions } from 'node:http2';

/** grpc-go's default SETTINGS_MAX_HEADER_LIST_SIZE. */
export const H2_MAX_HEADER_LIST_BYTES = 16 << 20;
/** As many pairs as a list of that size can hold (32 bytes of overhead each). */
export const H2_MAX_HEADER_PAIRS = H2_MAX_HEADER_LIST_BYTES / 32;

type HeaderLimits = Pick<ServerOptions & ClientSessionOptions, 'maxHeaderListPairs' | 'maxSendHeaderBlockLength'> & { settings: { maxHeaderListSize: number } };

/** The limits, merged into a session's own options (its settings kept). */
export function withHeaderLimits<T extends { settings?: object }>(options: T): T & HeaderLimits {
  return { ...options, maxHeaderListPairs: H2_MAX_HEADER_PAIRS, maxSendHeaderBlockLength: H2_MAX_HEADER_LIST_BYTES, settings: { ...options.settings, maxHeaderListSize: H2_MAX_HEADER_LIST_BYTES } };
}
