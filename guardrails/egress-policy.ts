/**
 * The egress router's policy, apart from its transports (router.ts for HTTP/1.1, h2-egress.ts for HTTP/2): what
 * one call is — refused, blocked, or forwarded with the router's identity — and what the router counts of it. Both
 * transports ask it the same question and answer alike (test/guardrails/router-transports.test.ts).
 */
import type { Server } from 'node:http';
import { type DependencyConfig } from '../core/index.js';
import { withoutHopByHop, type GrpcSchema, type ProtocolListener } from '../net/index.js';
import { isWrite, withBaggage } from './policies.js';
import { GrpcWriteRules } from './grpc-writes.js';
import { normalizedPath } from './request-path.js';

/** control′ gets listeners of its own when it is deployed per trial, so its calls never count as control's. */
export type RouterArm = 'control' | 'treatment' | 'control-prime';

/** What a trial header may hold: the trial's number. */
const TRIAL_NUMBER = /^\d{1,9}$/;
/** What a record header may hold: a corpus record id (a UUID when recorded; imported ids are tokens too). */
const RECORD_ID = /^[A-Za-z0-9._:@/+=-]{1,200}$/;

/** Latency bucket upper bounds, ms. */
const BUCKETS_MS: readonly number[] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, Number.POSITIVE_INFINITY];

export { BUCKETS_MS };

export class Counters {
  calls = 0;
  errors = 0;
  blocked = 0;
  refused = 0;
  readonly byTarget: Record<string, number> = {};
  readonly latency = BUCKETS_MS.map(() => 0);
  readonly records = new Set<string>();
  observe(ms: number): void {
    this.latency[BUCKETS_MS.findIndex((bound) => ms <= bound)]!++;
  }
}

/** What the policy decided for one call (EgressPolicy.decide). */
export type Decision =
  { readonly kind: 'refused' | 'blocked'; readonly reason: string } | { readonly kind: 'forward'; readonly headers: Record<string, string | string[]> };

export interface Listener {
  readonly arm: RouterArm;
  readonly dependency: DependencyConfig;
  readonly targets: readonly string[];
  /** Origin of each target, parsed once: redirects are checked against it. */
  readonly origins: readonly string[];
  /** This trial's counters: reset by setTrial, so each trial record carries its own calls and fan-out. */
  counters: Counters;
  server: Server;
  /** HTTP/1.1 and cleartext HTTP/2 on one port (net/protocol-listener.ts). */
  listener: ProtocolListener;
  authority: string;
  /** The same authority spelled with `localhost`, also accepted as Host. */
  localhost: string;
  /** Identity of this arm's calls in a trial, and its baggage when the caller sent none (cached per trial). */
  identity(trial: string): Readonly<Record<string, string>>;
  baggage(trial: string): string;
}

/** One call as either transport read it. */
export interface EgressCall {
  readonly method: string;
  readonly path: string;
  readonly host: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly grpc?: { readonly service: string; readonly method: string };
}

export interface EgressPolicyOptions {
  readonly experimentId: string;
  readonly dependencies: readonly DependencyConfig[];
  readonly grpcSchemas?: ReadonlyMap<string, GrpcSchema>;
  /** @default "x-tandem-" */
  readonly identityPrefix?: string;
  /** Largest request body read whole to fail over between pinned shards. @default 8 MiB */
  readonly maxBufferedBodyBytes?: number;
}

export class EgressPolicy {
  readonly identityPrefix: string;
  readonly maxBufferedBodyBytes: number;
  readonly #grpcWrites: GrpcWriteRules;
  readonly #trialHeader: string;
  readonly #recordHeader: string;
  /** experiment, arm, trial, job header names, built once. */
  readonly #identityHeaders: readonly [string, string, string, string];
  /** The trial now running; calls without an `x-tandem-trial` header are attributed to it. */
  trial = 0;

  constructor(options: EgressPolicyOptions) {
    this.#grpcWrites = new GrpcWriteRules(options.dependencies, options.grpcSchemas);
    this.identityPrefix = options.identityPrefix ?? 'x-tandem-';
    this.maxBufferedBodyBytes = options.maxBufferedBodyBytes ?? 8 * 1_048_576;
    const prefix = this.identityPrefix;
    this.#trialHeader = `${prefix}trial`;
    this.#recordHeader = `${prefix}record`;
    this.#identityHeaders = [`${prefix}experiment`, `${prefix}arm`, `${prefix}trial`, `${prefix}job`];
  }

  /**
   * The policy's decision on one call, whatever its protocol: refused (not this dependency, an unsafe
   * target), blocked (a write where writes are blocked), or the headers to forward it with — the SUT's
   * identity headers replaced by the router's own. Counts the call, the refusal or the block.
   */
  decide(listener: Listener, call: EgressCall): Decision {
    const { dependency, counters } = listener;
    const { method, path } = call;
    counters.calls++;
    const refuse = (reason: string): Decision => {
      counters.refused++;
      return { kind: 'refused', reason: `${dependency.name}: ${reason}` };
    };
    // Deny by default: only origin-form paths, addressed to this listener, reach a target.
    if (!path.startsWith('/')) return refuse(`absolute-form request URI ${path.slice(0, 100)} is not forwarded`);
    if (call.host !== listener.authority && call.host !== listener.localhost) return refuse(`Host ${call.host.slice(0, 100)} is not this dependency`);
    const normalized = normalizedPath(path);
    if (normalized === undefined) return refuse(`path ${path.slice(0, 100)} cannot be normalized (bad escape, control character, or ".." above the root)`);
    const write =
      call.grpc !== undefined
        ? this.#grpcWrites.isWrite(dependency, call.grpc.service, call.grpc.method)
        : isWrite(dependency, { method, target: path, headers: call.headers }, normalized);
    if (write && dependency.writes === 'block') {
      counters.blocked++;
      const what = call.grpc !== undefined ? `gRPC method ${call.grpc.service}/${call.grpc.method}` : `${method} ${path.split('?')[0]}`;
      return { kind: 'blocked', reason: `${dependency.name}: ${what} is a write, and this experiment blocks writes to it` };
    }
    // The router owns every identity header: what the SUT sent is read only where it is well-formed (a trial
    // number, a record id), and never passed on as sent — `x-tandem-trial: 9,tandem.job=prod` is not a trial.
    const sentTrial = call.headers[this.#trialHeader];
    const trial = typeof sentTrial === 'string' && TRIAL_NUMBER.test(sentTrial) ? sentTrial : String(this.trial);
    // A replayed request is the same record in the same trial: every trial replays the corpus again.
    const sentRecord = call.headers[this.#recordHeader];
    const record = typeof sentRecord === 'string' && RECORD_ID.test(sentRecord) ? sentRecord : undefined;
    if (record !== undefined && counters.records.size < 1_000_000) counters.records.add(`${trial}/${record}`);
    const headers = withoutHopByHop(call.headers, 'host', this.identityPrefix);
    if (record !== undefined) headers[this.#recordHeader] = record;
    const identity = listener.identity(trial);
    headers[this.#identityHeaders[0]] = identity.experiment!;
    headers[this.#identityHeaders[1]] = identity.arm!;
    headers[this.#identityHeaders[2]] = identity.trial!;
    headers[this.#identityHeaders[3]] = identity.job!;
    const baggage = call.headers.baggage;
    headers.baggage = typeof baggage === 'string' && baggage !== '' ? withBaggage(baggage, identity) : listener.baggage(trial);
    if (write && dependency.writes === 'tag') headers[`${this.identityPrefix}write`] = '1';
    return { kind: 'forward', headers };
  }

  /**
   * A call to several targets (a pinned subset) whose body was over the buffer it is read into to fail over
   * between them (its own limit, or the process's body budget, net/body-copy.ts): refused, counted as an error with
   * its latency, answered 413 (gRPC: RESOURCE_EXHAUSTED).
   */
  overBuffer(listener: Listener, startedMs: number, nowMs: number): string {
    listener.counters.errors++;
    listener.counters.observe(nowMs - startedMs);
    return `${listener.dependency.name}: request body over the router's buffer (${this.maxBufferedBodyBytes} bytes a call, within one budget for all bodies in the process)`;
  }
}
