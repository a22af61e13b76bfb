/**
 * `transport`: the limits every HTTP/2 session and body copy of a Tandem process takes (the recording sidecar, the
 * egress router, the replayer). The header list defaults to grpc-go's (internal/transport/defaults.go), so a hop
 * never refuses what a gRPC client and server accept; the reset budget is a tenth of nghttp2's burst and a third of
 * its rate (nghttp2_option_set_stream_reset_rate_limit). Applied by net/transport-limits.ts.
 */
import { z } from 'zod';

const MIB = 1_048_576;

export const TRANSPORT_DEFAULTS = {
  http2: { maxHeaderListBytes: 16 * MIB, maxConcurrentStreams: 1_000, resetBurst: 100, resetsPerSecond: 10 },
  bodyBudgetBytes: 256 * MIB,
} as const;

const d = TRANSPORT_DEFAULTS;

export const transportSchema = z.strictObject({
  http2: z
    .strictObject({
      maxHeaderListBytes: z
        .number()
        .int()
        .min(65_536)
        .max(64 * MIB)
        .default(d.http2.maxHeaderListBytes)
        .describe(
          "Largest header list (request or response headers, trailers) a session accepts or sends, in bytes; default grpc-go's 16 MiB. Header pairs are bounded by what the list holds (32 bytes each at least).",
        ),
      maxConcurrentStreams: z
        .number()
        .int()
        .min(1)
        .max(100_000)
        .default(d.http2.maxConcurrentStreams)
        .describe(
          'Streams one client connection may have open through the sidecar or the router; the sidecar never opens more upstream streams for a connection.',
        ),
      resetBurst: z
        .number()
        .int()
        .min(1)
        .default(d.http2.resetBurst)
        .describe(
          'Streams a client connection may reset before their answer all at once (HTTP/2 rapid reset); past its budget the sidecar sends GOAWAY(ENHANCE_YOUR_CALM) and closes it.',
        ),
      resetsPerSecond: z.number().gt(0).default(d.http2.resetsPerSecond).describe('How fast that budget refills, in resets per second.'),
    })
    .prefault({})
    .describe('HTTP/2 limits of every session Tandem accepts or opens.'),
  bodyBudgetBytes: z
    .number()
    .int()
    .min(MIB)
    .default(d.bodyBudgetBytes)
    .describe(
      "Bytes of bodies one process keeps at once for records, failover and comparison; past it a copy keeps only the body's size and hash (a record is then stored truncated).",
    ),
});

export type TransportConfig = z.output<typeof transportSchema>;
