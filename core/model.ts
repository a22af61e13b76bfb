/**
 * The records Tandem stores. Times are epoch milliseconds; every record is
 * plain JSON so both backends and the reports read the same shape.
 */
import type { TrialDetails } from './trial-details.js';

/** One sampled production request. */
/** Latest time a corpus record may carry: the end of year 9999 (ISO-8601 dates, hourly bucket names); the earliest is the epoch. */
export const LATEST_RECORD_MS = 253_402_300_799_999;

export interface CorpusRecord {
  /** Unique id (UUID) assigned when sampled. */
  readonly id: string;
  /** Serving tier the request was recorded at. */
  readonly tier: string;
  /** When the request arrived, epoch ms. */
  readonly timeMs: number;
  readonly method: string;
  /** Path plus query string, as received. */
  readonly path: string;
  /** Request headers after redaction; lower-case names. Repeated headers are joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  /** Request body, base64. Empty string for no body. */
  readonly body: string;
  /** True when the body exceeded the recorder's limit; such records are skipped by replay. */
  readonly bodyTruncated: boolean;
  /**
   * True when the body was not stored because it could not be redacted (structured but unreadable:
   * malformed JSON, a broken multipart, an unknown content encoding); `bodyTruncated` is true too, so replay skips it.
   */
  readonly bodyWithheld?: boolean;
  /** Sampling rate in force when the record was taken, in (0, 1]. */
  readonly sampleRate: number;
  /**
   * How the record was chosen: uniform sampling, sticky by key, an import, or a copy an edge proxy mirrored to
   * `tandem collect` (what the client finally received is not known there: a gRPC call's response is empty and
   * marked truncated, with status -1).
   */
  readonly sampleMode: 'uniform' | 'sticky' | 'import' | 'mirror';
  /**
   * Present when the request was a gRPC call (over HTTP/2): then `method` is POST, `path` is
   * `/package.Service/Method`, `headers` its metadata (`-bin` values as the base64 they are on the wire), and
   * `body` its request messages, length-prefixed exactly as sent. Replay sends it over HTTP/2. docs/grpc.md.
   */
  readonly grpc?: GrpcCall;
}

/** What a recorded gRPC call answered, as the upstream sent it (docs/grpc.md documents this schema; a test holds the two equal). */
export interface GrpcCall {
  /** `package.Service`. */
  readonly service: string;
  /** The method's name within its service. */
  readonly method: string;
  /** Request messages in the body. */
  readonly requestMessages: number;
  /** The response messages' payloads, base64, compression undone (one for a unary call; all of a server stream). */
  readonly responseMessages: readonly string[];
  /** Response messages not kept: over the recorder's body limit, or the stream ended mid-message. */
  readonly responseTruncated: boolean;
  /** `grpc-status`; -1 when the call ended without one (a reset stream, a dead upstream). */
  readonly status: number;
  /** `grpc-message`, percent-decoded. */
  readonly statusMessage: string;
  /** Response trailers (and the headers of a trailers-only response), redacted like request headers. */
  readonly trailers: Readonly<Record<string, string>>;
}

/** One point of a time series, tagged with its experiment, trial and arm. */
export interface Sample {
  readonly experimentId: string;
  readonly trial: number;
  /** `control`, `treatment`, `control-prime`, or a dependency-side name. */
  readonly arm: string;
  /** Metric name, e.g. `process_cpu_seconds`, `process_rss_bytes` (a deployed arm, from /proc), or a scraped Prometheus series. */
  readonly metric: string;
  readonly timeMs: number;
  readonly value: number;
  /** Extra dimensions (record id, status class, dependency…). */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * `completed`: ran to the end without a verdict (a plain replay, an A/A calibration). `inconclusive`: judged,
 * but a critical metric was still undecided at the last trial (never a pass). `deferred`: selected for a change
 * but sampled out at its stage (low priority).
 */
export type ExperimentStatus = 'queued' | 'running' | 'passed' | 'regressed' | 'inconclusive' | 'completed' | 'cancelled' | 'failed' | 'deferred';

/** One paired trial attempt; replaced and excluded attempts are kept with their reason. */
export interface TrialRecord {
  readonly index: number;
  readonly attempt: number;
  readonly status: 'running' | 'completed' | 'replaced' | 'excluded' | 'cancelled' | 'failed';
  readonly startedAtMs: number;
  readonly endedAtMs?: number;
  readonly reason?: string;
  /** What the trial was: its load, slots, fingerprints, the router's counters… (core/trial-details.ts). */
  readonly details?: TrialDetails;
}

/** An experiment and everything decided about it; upserted as it progresses. */
export interface ExperimentRecord {
  readonly id: string;
  readonly workload: string;
  readonly status: ExperimentStatus;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  /** Seed of every random choice in the experiment, so it can be reproduced. */
  readonly seed: number;
  /** What was asked for: revisions, stage, dedupe key, overrides. */
  readonly spec: Readonly<Record<string, unknown>>;
  readonly trials: readonly TrialRecord[];
  /** The harness's verdict once there is one. */
  readonly verdict?: Readonly<Record<string, unknown>>;
  /** Why the experiment ended the way it did, for cancelled and failed ones. */
  readonly reason?: string;
}

/** A lifecycle event of an experiment. */
export interface ExperimentEvent {
  readonly experimentId: string;
  readonly timeMs: number;
  /** e.g. `status`, `trial-started`, `cancel-requested`. */
  readonly type: string;
  readonly message?: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

/** One check of one detector. */
export interface DetectorObservation {
  readonly experimentId: string;
  readonly detector: string;
  readonly timeMs: number;
  /** The compared quantity; null when the source gave none. */
  readonly value: number | null;
  readonly baseline: number | null;
  readonly verdict: 'skipped' | 'clear' | 'violation' | 'error';
  readonly message?: string;
}

/** A service read a config file (and, when known, one setting in it). */
export interface ConfigRead {
  readonly service: string;
  readonly file: string;
  /** Dotted setting path; empty string for a file-level read. */
  readonly setting: string;
  readonly timeMs: number;
}

/** An error a dependency recorded, with the identity of the caller it blamed. */
export interface DependencyErrorRecord {
  readonly timeMs: number;
  readonly dependency: string;
  /** Which shard or task logged it, when sharded. */
  readonly shard: string;
  /** e.g. `worker-restart`, `contract-violation`, `exception`. */
  readonly kind: string;
  readonly message: string;
  /** Experiment identity from the caller's headers; empty strings when absent. */
  readonly experimentId: string;
  readonly arm: string;
  readonly trial: string;
  readonly job: string;
  /** Every job implicated when the error is at batch granularity. */
  readonly jobs: readonly string[];
}

/** How a replayed request failed, if it did. */
/** `grpc`: a gRPC call answered with a status other than OK (DEADLINE_EXCEEDED is a `timeout`). */
export type ErrorClass = '' | 'timeout' | 'reset' | 'refused' | '5xx' | '4xx' | 'grpc' | 'cancelled' | 'other';

/** One replayed request to one arm, in a trial's measurement window. */
export interface RequestOutcome {
  readonly experimentId: string;
  readonly trial: number;
  readonly attempt: number;
  readonly arm: string;
  readonly recordId: string;
  /** When the request should have been sent (open loop), epoch ms. */
  readonly intendedMs: number;
  /** From the intended send time to the end of the response body, ms. */
  readonly latencyMs: number;
  /** HTTP status; 0 when there was no response. */
  readonly status: number;
  readonly bytes: number;
  readonly errorClass: ErrorClass;
  /** SHA-1 of the response body, hex; empty when there was none. */
  readonly bodyHash: string;
  /** This arm got the request before the other arm. */
  readonly first: boolean;
  /** The response body, base64, when the workload compares responses: decoded (content encoding undone) and kept up to the compared size. */
  readonly body?: string;
  /** What comparing this response needs beyond its body (kept when the workload compares responses). */
  readonly response?: ResponseView;
  /** Which of the arm's processes answered, 0-based, when the arm runs several (`trials.processes`). */
  readonly process?: number;
  /** A gRPC call's `grpc-status` (from trailers or a trailers-only response); -1 when the call ended without one. */
  readonly grpcStatus?: number;
}

/** One replayed response as the comparison sees it (see replayer/response-view.ts). */
export interface ResponseView {
  /** The request, for grouping differences by endpoint; its body cut to 1 KiB. */
  readonly method: string;
  readonly path: string;
  readonly requestBody?: string;
  readonly contentType?: string;
  /** The content encoding the body came in, undone before comparing. */
  readonly encoding?: string;
  readonly decodedBytes: number;
  /** SHA-1 of the decoded body, hex; empty when it could not be decoded. */
  readonly contentHash: string;
  /** For a JSON body larger than the kept size: per generalized path, [hash of its values in order, first value]. */
  readonly sketch?: Readonly<Record<string, readonly [string, string]>>;
  /** Why this body cannot be compared. */
  readonly skipped?: string;
  /** A gRPC response: the body kept is its messages' payloads, each length-prefixed, compression undone; compared as decoded messages. */
  readonly grpc?: { readonly status: number; readonly statusMessage: string; readonly messages: number };
}
