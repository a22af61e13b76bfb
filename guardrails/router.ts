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
import { type DependencyConfig, type DependencyCounters } from '../core/index.js';
import { BodyCopy, protocolListener, transportFailureOf, withoutHopByHop, type GrpcSchema, type ProtocolListener } from '../net/index.js';
import { allowedTargets, withBaggage } from './policies.js';
import { BUCKETS_MS, Counters, EgressPolicy, type Listener, type RouterArm } from './egress-policy.js';
import { H2Egress } from './h2-egress.js';

export type { RouterArm } from './egress-policy.js';

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

export type { DependencyCounters } from '../core/index.js';

const discard = (): Writable => new Writable({ write: (_chunk, _encoding, done) => done() });

export class EgressRouter {
  readonly #listeners: Listener[] = [];
  readonly #pools = new Map<string, Pool>();
  readonly #options: RouterOptions;
  readonly #policy: EgressPolicy;
  readonly #h2: H2Egress;
  #next = 0;

  constructor(options: RouterOptions) {
    this.#options = options;
    this.#policy = new EgressPolicy(options);
    this.#h2 = new H2Egress(this.#policy);
  }

  /** Prefix of the identity headers the router owns. */
  get identityPrefix(): string {
    return this.#policy.identityPrefix;
  }

  /** The router URL of each dependency, per arm: what each arm's deployment is given. */
  get urls(): Record<RouterArm, Record<string, string>> {
    const urls = { control: {}, treatment: {}, 'control-prime': {} } as Record<RouterArm, Record<string, string>>;
    for (const l of this.#listeners) urls[l.arm][l.dependency.name] = `http://${l.authority}`;
    return urls;
  }

  /** The trial now running; calls without an `x-tandem-trial` header are attributed to it. Starts a fresh set of counters. */
  setTrial(trial: number): void {
    this.#policy.trial = trial;
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
    res.writeHead(status, { 'content-type': 'text/plain', [`${this.#policy.identityPrefix}${header}`]: reason.replace(/[^\x20-\x7e]/g, '?') });
    res.end(`${reason}\n`);
  }

  #handle(listener: Listener, req: IncomingMessage, res: ServerResponse): void {
    const { counters } = listener;
    const started = performance.now();
    const decision = this.#policy.decide(listener, { method: req.method ?? 'GET', path: req.url ?? '/', host: req.headers.host ?? '', headers: req.headers });
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
    // Within the call's limit and the process's body budget (net/body-copy.ts); given back when the call ends.
    const copy = new BodyCopy(this.#policy.maxBufferedBodyBytes);
    res.once('close', () => copy.release());
    req.on('data', (chunk: Buffer) => copy.add(chunk));
    req.once('end', () => {
      if (copy.truncated) return this.#answer(res, 413, 'refused', this.#policy.overBuffer(listener, started, performance.now()));
      this.#forward(listener, req, res, headers, copy.bytes(), 0, finish);
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
          const failure = transportFailureOf(error);
          if (!responded && failure === 'refused' && attempt + 1 < targets.length && (body === null || Buffer.isBuffer(body))) {
            return this.#forward(listener, req, res, headers, body, attempt + 1, finish);
          }
          finish(true);
          const timeout = failure === 'timeout';
          this.#answer(
            res,
            timeout ? 504 : 502,
            'error',
            `${dependency.name}: ${timeout ? `no answer within ${dependency.timeout} ms` : `upstream failed (${code || (error as Error).message})`}`,
          );
        },
      );
  }
}

export async function startRouter(options: RouterOptions): Promise<EgressRouter> {
  const router = new EgressRouter(options);
  await router.start();
  return router;
}
