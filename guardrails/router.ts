/**
 * The egress router: one listener per (arm, dependency) that the SUT is
 * given instead of the dependency's address. It is deny-by-default: it
 * forwards only to the targets the dependency's policy allows (isolated
 * replica, pinned shard subset, shared target), refuses absolute-form URIs,
 * foreign Host headers and redirects elsewhere, tags every call with the
 * experiment's identity, and blocks or tags writes. Counters per (arm,
 * dependency, policy) include fan-out: calls per replayed request.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { protocolListener, withoutHopByHop, type DependencyConfig, type GrpcSchema, type ProtocolListener } from '../core/index.js';
import { allowedTargets, isWrite, withBaggage } from './policies.js';
import { GrpcWriteRules } from './grpc-writes.js';
import { H2Egress } from './h2-egress.js';
import { normalizedPath } from './request-path.js';

/** control′ gets listeners of its own when it is deployed per trial, so its calls never count as control's. */
export type RouterArm = 'control' | 'treatment' | 'control-prime';

/** What a trial header may hold: the trial's number. */
const TRIAL_NUMBER = /^\d{1,9}$/;
/** What a record header may hold: a corpus record id (a UUID when recorded; imported ids are tokens too). */
const RECORD_ID = /^[A-Za-z0-9._:@/+=-]{1,200}$/;

export interface RouterOptions {
  readonly experimentId: string;
  readonly seed: number;
  readonly dependencies: readonly DependencyConfig[];
  /** @default ["control", "treatment"] */
  readonly arms?: readonly RouterArm[];
  /** @default "x-tandem-" */
  readonly identityPrefix?: string;
  /** Connections per target. @default 64 */
  readonly connections?: number;
  /** Largest request body buffered to fail over between pinned shards. @default 8 MiB */
  readonly maxBufferedBodyBytes?: number;
  /** Descriptors of dependencies whose config names a `grpc.descriptorSet`, by dependency name (see grpc-writes.ts). */
  readonly grpcSchemas?: ReadonlyMap<string, GrpcSchema>;
}

/** Latency bucket upper bounds, ms. */
const BUCKETS_MS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, Number.POSITIVE_INFINITY];

export interface DependencyCounters {
  readonly arm: RouterArm;
  readonly dependency: string;
  readonly policy: DependencyConfig['policy'];
  readonly targets: readonly string[];
  readonly calls: number;
  readonly errors: number;
  readonly blocked: number;
  readonly refused: number;
  /** Calls per target, for checking where traffic went. */
  readonly byTarget: Readonly<Record<string, number>>;
  /** Counts per latency bucket (upper bounds in `bucketsMs`). */
  readonly latencyBuckets: readonly number[];
  readonly bucketsMs: readonly number[];
  /** Distinct replayed requests (x-tandem-record) that caused calls, and calls per such request. */
  readonly replayedRequests: number;
  readonly fanOut: number;
}

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

/** What the policy decided for one call (EgressRouter.decide). */
export type Decision = { readonly kind: 'refused' | 'blocked'; readonly reason: string } | { readonly kind: 'forward'; readonly headers: Record<string, string | string[]> };

export interface Listener {
  readonly arm: RouterArm;
  readonly dependency: DependencyConfig;
  readonly targets: readonly string[];
  /** Origin of each target, parsed once: redirects are checked against it. */
  readonly origins: readonly string[];
  /** This trial's counters: reset by setTrial, so each trial record carries its own calls and fan-out. */
  counters: Counters;
  server: Server;
  /** HTTP/1.1 and cleartext HTTP/2 on one port (core/protocol-listener.ts). */
  listener: ProtocolListener;
  authority: string;
  /** The same authority spelled with `localhost`, also accepted as Host. */
  localhost: string;
  /** Identity of this arm's calls in a trial, and its baggage when the caller sent none (cached per trial). */
  identity(trial: string): Readonly<Record<string, string>>;
  baggage(trial: string): string;
}

const discard = (): Writable => new Writable({ write: (_chunk, _encoding, done) => done() });

export class EgressRouter {
  readonly #listeners: Listener[] = [];
  readonly #pools = new Map<string, Pool>();
  readonly #options: RouterOptions;
  readonly #grpcWrites: GrpcWriteRules;
  readonly #h2: H2Egress;
  readonly #prefix: string;
  readonly #trialHeader: string;
  readonly #recordHeader: string;
  /** experiment, arm, trial, job header names, built once. */
  readonly #identityHeaders: readonly [string, string, string, string];
  #trial = 0;
  #next = 0;

  constructor(options: RouterOptions) {
    this.#options = options;
    this.#grpcWrites = new GrpcWriteRules(options.dependencies, options.grpcSchemas);
    this.#h2 = new H2Egress(this);
    this.#prefix = options.identityPrefix ?? 'x-tandem-';
    this.#trialHeader = `${this.#prefix}trial`;
    this.#recordHeader = `${this.#prefix}record`;
    this.#identityHeaders = [`${this.#prefix}experiment`, `${this.#prefix}arm`, `${this.#prefix}trial`, `${this.#prefix}job`];
  }

  /** Prefix of the identity headers the router owns. */
  get identityPrefix(): string {
    return this.#prefix;
  }

  /** The router URL of each dependency, per arm: what each arm's deployment is given. */
  get urls(): Record<RouterArm, Record<string, string>> {
    const urls = { control: {}, treatment: {}, 'control-prime': {} } as Record<RouterArm, Record<string, string>>;
    for (const l of this.#listeners) urls[l.arm][l.dependency.name] = `http://${l.authority}`;
    return urls;
  }

  /** The trial now running; calls without an `x-tandem-trial` header are attributed to it. Starts a fresh set of counters. */
  setTrial(trial: number): void {
    this.#trial = trial;
    // Fan-out is calls per distinct replayed request, and every trial replays the same records:
    // cumulative counters would divide by a set that stops growing after the first trial.
    for (const listener of this.#listeners) listener.counters = new Counters();
  }

  /** Counters since the last setTrial (or since start). */
  snapshot(): DependencyCounters[] {
    return this.#listeners.map(({ arm, dependency, targets, counters: c }) => ({
      arm,
      dependency: dependency.name,
      policy: dependency.policy,
      targets,
      calls: c.calls,
      errors: c.errors,
      blocked: c.blocked,
      refused: c.refused,
      byTarget: { ...c.byTarget },
      latencyBuckets: [...c.latency],
      bucketsMs: BUCKETS_MS,
      replayedRequests: c.records.size,
      fanOut: c.records.size > 0 ? c.calls / c.records.size : 0,
    }));
  }

  async start(): Promise<void> {
    for (const arm of this.#options.arms ?? ['control', 'treatment']) {
      for (const dependency of this.#options.dependencies) {
        const targets = allowedTargets(dependency, this.#options.seed).map((t) => t.replace(/\/$/, ''));
        const identities = new Map<string, { identity: Record<string, string>; baggage: string }>();
        const forTrial = (trial: string): { identity: Record<string, string>; baggage: string } => {
          let cached = identities.get(trial);
          if (!cached) {
            const identity = { experiment: this.#options.experimentId, arm, trial, job: `${this.#options.experimentId}.${arm}` };
            cached = { identity, baggage: withBaggage(undefined, identity) };
            identities.set(trial, cached);
          }
          return cached;
        };
        const listener: Listener = {
          arm,
          dependency,
          targets,
          origins: targets.map((t) => new URL(t).origin),
          counters: new Counters(),
          server: undefined as unknown as Server,
          listener: undefined as unknown as ProtocolListener,
          authority: '',
          localhost: '',
          identity: (trial) => forTrial(trial).identity,
          baggage: (trial) => forTrial(trial).baggage,
        };
        listener.server = createServer((req, res) => this.#handle(listener, req, res));
        listener.listener = protocolListener(listener.server, this.#h2.serverFor(listener));
        listener.listener.server.listen(0, '127.0.0.1');
        await once(listener.listener.server, 'listening');
        listener.authority = `127.0.0.1:${(listener.listener.server.address() as AddressInfo).port}`;
        listener.localhost = listener.authority.replace('127.0.0.1', 'localhost');
        this.#listeners.push(listener);
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all(
      this.#listeners.map(
        (l) =>
          new Promise<void>((resolve) => {
            l.listener.server.close(() => resolve());
            l.server.closeAllConnections();
            for (const socket of l.listener.sockets) socket.destroy();
          }),
      ),
    );
    this.#h2.close();
    await Promise.all([...this.#pools.values()].map((pool) => pool.destroy()));
  }

  #pool(target: string, timeoutMs: number): Pool {
    let pool = this.#pools.get(target);
    if (!pool) {
      pool = new Pool(target, { connections: this.#options.connections ?? 64, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 4_000 });
      this.#pools.set(target, pool);
    }
    return pool;
  }

  #answer(res: ServerResponse, status: number, header: string, reason: string): void {
    if (res.headersSent) return void res.destroy();
    res.writeHead(status, { 'content-type': 'text/plain', [`${this.#prefix}${header}`]: reason.replace(/[^\x20-\x7e]/g, '?') });
    res.end(`${reason}\n`);
  }

  /**
   * The policy's decision on one call, whatever its protocol: refused (not this dependency, an unsafe
   * target), blocked (a write where writes are blocked), or the headers to forward it with — the SUT's
   * identity headers replaced by the router's own. Counts the call, the refusal or the block.
   */
  decide(listener: Listener, call: { method: string; path: string; host: string; headers: Readonly<Record<string, string | string[] | undefined>>; grpc?: { service: string; method: string } }): Decision {
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
    const write = call.grpc !== undefined ? this.#grpcWrites.isWrite(dependency, call.grpc.service, call.grpc.method) : isWrite(dependency, { method, target: path, headers: call.headers }, normalized);
    if (write && dependency.writes === 'block') {
      counters.blocked++;
      const what = call.grpc !== undefined ? `gRPC method ${call.grpc.service}/${call.grpc.method}` : `${method} ${path.split('?')[0]}`;
      return { kind: 'blocked', reason: `${dependency.name}: ${what} is a write, and this experiment blocks writes to it` };
    }
    // The router owns every identity header: what the SUT sent is read only where it is well-formed (a trial
    // number, a record id), and never passed on as sent — `x-tandem-trial: 9,tandem.job=prod` is not a trial.
    const sentTrial = call.headers[this.#trialHeader];
    const trial = typeof sentTrial === 'string' && TRIAL_NUMBER.test(sentTrial) ? sentTrial : String(this.#trial);
    // A replayed request is the same record in the same trial: every trial replays the corpus again.
    const sentRecord = call.headers[this.#recordHeader];
    const record = typeof sentRecord === 'string' && RECORD_ID.test(sentRecord) ? sentRecord : undefined;
    if (record !== undefined && counters.records.size < 1_000_000) counters.records.add(`${trial}/${record}`);
    const headers = withoutHopByHop(call.headers, 'host', this.#prefix);
    if (record !== undefined) headers[this.#recordHeader] = record;
    const identity = listener.identity(trial);
    headers[this.#identityHeaders[0]] = identity.experiment!;
    headers[this.#identityHeaders[1]] = identity.arm!;
    headers[this.#identityHeaders[2]] = identity.trial!;
    headers[this.#identityHeaders[3]] = identity.job!;
    const baggage = call.headers.baggage;
    headers.baggage = typeof baggage === 'string' && baggage !== '' ? withBaggage(baggage, identity) : listener.baggage(trial);
    if (write && dependency.writes === 'tag') headers[`${this.#prefix}write`] = '1';
    return { kind: 'forward', headers };
  }

  #handle(listener: Listener, req: IncomingMessage, res: ServerResponse): void {
    const { dependency, counters } = listener;
    const started = performance.now();
    const decision = this.decide(listener, { method: req.method ?? 'GET', path: req.url ?? '/', host: req.headers.host ?? '', headers: req.headers });
    if (decision.kind !== 'forward') {
      req.resume();
      return this.#answer(res, 403, decision.kind, decision.reason);
    }
    const { headers } = decision;
    const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
    const finish = (error: boolean): void => {
      if (error) counters.errors++;
      counters.observe(performance.now() - started);
    };
    // One target: stream the body through. Several (pinned subset): buffer it, to fail over between them.
    if (listener.targets.length === 1 || !hasBody) return this.#forward(listener, req, res, headers, hasBody ? req : null, 0, finish);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= (this.#options.maxBufferedBodyBytes ?? 8 * 1_048_576)) chunks.push(chunk);
    });
    req.once('end', () => {
      if (size > (this.#options.maxBufferedBodyBytes ?? 8 * 1_048_576)) {
        finish(true);
        return this.#answer(res, 413, 'refused', `${dependency.name}: request body over the router's buffer`);
      }
      this.#forward(listener, req, res, headers, Buffer.concat(chunks), 0, finish);
    });
  }

  /**
   * Every Location a response carries, whatever its status, must stay on the
   * target's origin; several Location headers are ambiguous (clients differ in
   * which they follow) and refused. A same-origin one is rewritten to a path,
   * so the caller comes back through the router.
   */
  #checkLocation(header: string | string[] | undefined, target: string, origin: string): { value?: string; refused?: string } {
    if (header === undefined) return {};
    const values = Array.isArray(header) ? header : [header];
    if (values.length !== 1) return { refused: `a response with ${values.length} Location headers is ambiguous` };
    const location = values[0]!;
    let resolved: URL | undefined;
    try {
      resolved = new URL(location, target);
    } catch {
      resolved = undefined;
    }
    if (!resolved || resolved.origin !== origin) return { refused: `redirect to ${location.slice(0, 100)} is outside the allowed targets` };
    return { value: `${resolved.pathname}${resolved.search}` };
  }

  #forward(
    listener: Listener,
    req: IncomingMessage,
    res: ServerResponse,
    headers: Record<string, string | string[]>,
    body: IncomingMessage | Buffer | null,
    attempt: number,
    finish: (error: boolean) => void,
  ): void {
    const { dependency, counters, targets } = listener;
    // Spread across the allowed targets; on a connection failure try the next one — never another shard.
    const index = (this.#next++ + attempt) % targets.length;
    const target = targets[index]!;
    const origin = listener.origins[index]!;
    counters.byTarget[target] = (counters.byTarget[target] ?? 0) + 1;
    let responded = false;
    this.#pool(target, dependency.timeout)
      .stream({ path: req.url ?? '/', method: (req.method ?? 'GET') as 'GET', headers, body }, ({ statusCode, headers: responseHeaders }) => {
        responded = true;
        const location = this.#checkLocation(responseHeaders.location, target, origin);
        if (location.refused !== undefined) {
          counters.refused++;
          finish(true);
          this.#answer(res, 502, 'refused', `${dependency.name}: ${location.refused}`);
          return discard();
        }
        if (location.value !== undefined) responseHeaders.location = location.value;
        res.writeHead(statusCode, withoutHopByHop(responseHeaders as Record<string, string | string[] | undefined>));
        return res;
      })
      .then(
        () => finish(false),
        (error: unknown) => {
          const code = (error as { code?: string }).code ?? '';
          if (!responded && code === 'ECONNREFUSED' && attempt + 1 < targets.length && (body === null || Buffer.isBuffer(body))) {
            return this.#forward(listener, req, res, headers, body, attempt + 1, finish);
          }
          finish(true);
          const timeout = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
          this.#answer(res, timeout ? 504 : 502, 'error', `${dependency.name}: ${timeout ? `no answer within ${dependency.timeout} ms` : `upstream failed (${code || (error as Error).message})`}`);
        },
      );
  }
}

export async function startRouter(options: RouterOptions): Promise<EgressRouter> {
  const router = new EgressRouter(options);
  await router.start();
  return router;
}
