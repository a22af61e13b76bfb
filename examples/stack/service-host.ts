/**
 * What every example service shares: a node:http server on 127.0.0.1,
 * JSON routes, Prometheus metrics, /healthz, level control, a load-factor
 * from measured compute time, and propagation of experiment identity,
 * baggage, test-scenario levels and deadlines to downstream calls.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { type Clock, systemClock } from '../../core/clock.js';
import { LoadFactor } from './load-factor.js';
import { ThroughputLimit } from './throughput-limit.js';
import { LEVELS_HEADER, ServiceLevels, parseLevelsHeader } from './levels.js';
import { LatticeClient } from '../../lattice/client.js';
import { NoWorkerAvailableError, WorkerCrashedError } from './worker-pool.js';
import { DownstreamError } from './json-client.js';

/** Experiment identity carried on requests (FIRE: attribution needs caller identity). */
export interface Identity {
  readonly experiment: string;
  readonly arm: string;
  readonly trial: string;
  readonly job: string;
}

export const IDENTITY_PREFIX = 'x-tandem-';
export const DEADLINE_HEADER = 'x-deadline-ms';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface ServiceRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined when empty). */
  readonly body: unknown;
  readonly identity: Identity;
  readonly requestedLevels: Readonly<Record<string, number>>;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /** Headers to send on downstream calls: identity, baggage, levels, deadline. */
  readonly forwardHeaders: Readonly<Record<string, string>>;
}

export interface ServiceResponse {
  readonly status?: number;
  readonly body: unknown;
}

export type RouteHandler = (request: ServiceRequest) => Promise<ServiceResponse>;

export interface ServiceHostOptions {
  /** Service name: the `service` label of every metric and the key in the levels header. */
  readonly name: string;
  /** Extra constant label, e.g. the shard of a prediction shard. */
  readonly shard?: string;
  /** @default "127.0.0.1" */
  readonly host?: string;
  /** @default 0 (any free port) */
  readonly port?: number;
  readonly clock?: Clock;
  /** Highest degradation level; 0 for services without levels. @default 0 */
  readonly maxLevel?: number;
  readonly localThresholds?: readonly number[];
  /** @default 1048576 */
  readonly maxBodyBytes?: number;
  /**
   * Model the service's capacity as a fixed throughput in units of work per
   * second (see ThroughputLimit); its load-factor is then the committed share
   * of that throughput (1 = at capacity) instead of measured CPU time.
   */
  readonly unitsPerSecond?: number;
}

const FORWARDED = [LEVELS_HEADER, DEADLINE_HEADER, 'baggage', 'traceparent'];

export class ServiceHost {
  readonly name: string;
  readonly registry = new Registry();
  readonly levels: ServiceLevels;
  readonly loadFactor: LoadFactor;
  readonly clock: Clock;
  readonly metrics;
  readonly #routes = new Map<string, RouteHandler>();
  readonly #server: Server;
  readonly #options: ServiceHostOptions;
  readonly #closers: (() => void | Promise<void>)[] = [];
  readonly #throughput: ThroughputLimit | undefined;
  #url: string | undefined;

  constructor(options: ServiceHostOptions) {
    this.#options = options;
    this.name = options.name;
    this.clock = options.clock ?? systemClock;
    this.levels = new ServiceLevels(options.name, options.maxLevel ?? 0, options.localThresholds);
    this.#throughput = options.unitsPerSecond !== undefined ? new ThroughputLimit(options.unitsPerSecond, this.clock) : undefined;
    this.loadFactor = new LoadFactor(this.clock, this.#throughput ? 1 : undefined);
    this.registry.setDefaultLabels(options.shard ? { service: options.name, shard: options.shard } : { service: options.name });
    const registers = [this.registry];
    const loadFactor = this.loadFactor;
    const levels = this.levels;
    this.metrics = {
      requests: new Counter({ name: 'requests_total', help: 'Requests handled, by route and status.', labelNames: ['route', 'status'], registers }),
      errors: new Counter({ name: 'errors_total', help: 'Errors, by kind.', labelNames: ['kind'], registers }),
      experimentRequests: new Counter({
        name: 'experiment_requests_total',
        help: 'Requests carrying experiment identity, by experiment.',
        labelNames: ['experiment'],
        registers,
      }),
      duration: new Histogram({
        name: 'request_duration_seconds',
        help: 'Request latency.',
        labelNames: ['route'],
        buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2],
        registers,
      }),
      restarts: new Counter({ name: 'worker_restarts_total', help: 'Worker crashes followed by a restart.', registers }),
      work: new Counter({ name: 'work_units_total', help: 'Deterministic units of compute work (multiply-adds).', registers }),

      compute: new Gauge({
        name: 'compute_seconds_total',
        help: 'Seconds spent computing (CPU time of this single-threaded service).',
        registers,
        collect() {
          this.set(loadFactor.totalSeconds);
        },
      }),
      loadFactor: new Gauge({
        name: 'load_factor',
        help: 'Share of the last second spent computing, relative to the target utilization (1 = at target).',
        registers,
        collect() {
          this.set(loadFactor.value());
        },
      }),
      level: new Gauge({
        name: 'service_level',
        help: 'Degradation level: local (from load-factor) and assigned (by a controller).',
        labelNames: ['source'],
        registers,
        collect() {
          this.set({ source: 'local' }, levels.local(loadFactor.value()));
          this.set({ source: 'assigned' }, levels.assigned);
        },
      }),
    };
    this.#server = createServer((req, res) => void this.#handle(req, res));
    this.#server.keepAliveTimeout = 5_000;
  }

  /** Register `handler` for e.g. `POST /rank`. */
  route(key: string, handler: RouteHandler): this {
    this.#routes.set(key, handler);
    return this;
  }

  /** Run a synchronous compute section, counting its time toward the load-factor (unless capacity is a throughput limit). */
  compute<T>(work: () => T): T {
    // CPU time, not wall time: on a busy machine a section preempted by other processes is not busier.
    const start = process.cpuUsage();
    try {
      return work();
    } finally {
      if (!this.#throughput) {
        const used = process.cpuUsage(start);
        this.loadFactor.addBusy((used.user + used.system) / 1000);
      }
    }
  }

  /** Wait for `units` of the service's throughput limit; at once when it has none. */
  async occupy(units: number): Promise<void> {
    await this.#throughput?.occupy(units, (serviceMs) => this.loadFactor.addBusy(serviceMs));
  }

  /** The level in force for a request. */
  levelFor(request: ServiceRequest): number {
    return this.levels.inForce(this.loadFactor.value(), request.requestedLevels);
  }

  get url(): string {
    if (this.#url === undefined) throw new Error(`${this.name} is not listening`);
    return this.#url;
  }

  async listen(): Promise<string> {
    this.#server.listen(this.#options.port ?? 0, this.#options.host ?? '127.0.0.1');
    await once(this.#server, 'listening');
    const { port } = this.#server.address() as AddressInfo;
    this.#url = `http://${this.#options.host ?? '127.0.0.1'}:${port}`;
    return this.#url;
  }

  /**
   * Take part in a lattice controller's coordination (HiLO): report the load-factor and
   * take the assigned level every poll; when the controller is unreachable the
   * assignment ages out and the service keeps its local level.
   */
  coordinate(controllerUrl: string, options: { pollIntervalMs?: number; scenario?: string } = {}): void {
    const client = new LatticeClient({
      controllerUrl,
      service: this.name,
      ...(options.scenario ? { scenario: options.scenario } : {}),
      localLevel: () => this.levels.local(this.loadFactor.value()),
      clock: this.clock,
      pollIntervalMs: options.pollIntervalMs ?? 1_000,
    });
    const stop = new AbortController();
    const loop = (async () => {
      while (!stop.signal.aborted) {
        await client.reportLoadFactor(this.loadFactor.value());
        await client.poll();
        this.levels.assign(client.assignedLevel() ?? 0);
        try {
          await this.clock.sleep(options.pollIntervalMs ?? 1_000, stop.signal);
        } catch {
          return;
        }
      }
    })();
    this.onClose(async () => {
      stop.abort();
      await loop;
    });
  }

  /** Release something the service owns (worker pools, clients) when it closes. */
  onClose(closer: () => void | Promise<void>): void {
    this.#closers.push(closer);
  }

  async close(): Promise<void> {
    if (this.#server.listening) {
      const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
      this.#server.closeAllConnections();
      await closed;
    }
    for (const closer of this.#closers.splice(0)) await closer();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const routeKey = `${req.method ?? 'GET'} ${url.pathname}`;
    let status = 200;
    let payload: unknown;
    let contentType = 'application/json';
    try {
      if (routeKey === 'GET /metrics') {
        payload = await this.registry.metrics();
        contentType = this.registry.contentType;
      } else if (routeKey === 'GET /healthz') {
        payload = { ok: true, service: this.name };
      } else if (routeKey === 'GET /level') {
        payload = { local: this.levels.local(this.loadFactor.value()), assigned: this.levels.assigned, loadFactor: this.loadFactor.value() };
      } else if (routeKey === 'PUT /level') {
        const body = (await readJson(req, this.#options.maxBodyBytes ?? 1_048_576)) as { level?: unknown } | undefined;
        if (typeof body?.level !== 'number' || !Number.isInteger(body.level) || body.level < 0)
          throw new HttpError(400, 'body must be {"level": <integer >= 0>}');
        this.levels.assign(body.level);
        payload = { assigned: this.levels.assigned };
      } else {
        const handler = this.#routes.get(routeKey);
        if (!handler) throw new HttpError(404, `no route ${routeKey}`);
        const response = await handler(await this.#request(req, res, url));
        status = response.status ?? 200;
        payload = response.body;
      }
    } catch (error) {
      [status, payload] = this.#failure(error);
    }
    const route = this.#routes.has(routeKey) ? routeKey : url.pathname === '/metrics' || url.pathname === '/healthz' ? routeKey : 'other';
    this.metrics.requests.inc({ route, status: String(status) });
    this.metrics.duration.observe({ route }, (performance.now() - started) / 1000);
    if (res.destroyed) return;
    const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
    res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  async #request(req: IncomingMessage, res: ServerResponse, url: URL): Promise<ServiceRequest> {
    const body = await readJson(req, this.#options.maxBodyBytes ?? 1_048_576);
    const controller = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) controller.abort(new Error('client went away'));
    });
    return this.serviceRequest({
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body,
      signal: controller.signal,
    });
  }

  /**
   * A request as the routes see it, from whatever carried it (HTTP here, gRPC metadata in
   * prediction-grpc.ts): the caller's experiment identity (counted), requested levels, forwarded headers.
   */
  serviceRequest(parts: {
    method: string;
    path: string;
    query?: URLSearchParams;
    headers: IncomingHttpHeaders;
    body: unknown;
    signal: AbortSignal;
  }): ServiceRequest {
    const header = (name: string): string => {
      const value = parts.headers[name];
      return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
    };
    const identity: Identity = {
      experiment: header(`${IDENTITY_PREFIX}experiment`),
      arm: header(`${IDENTITY_PREFIX}arm`),
      trial: header(`${IDENTITY_PREFIX}trial`),
      job: header(`${IDENTITY_PREFIX}job`),
    };
    if (identity.experiment !== '') this.metrics.experimentRequests.inc({ experiment: identity.experiment });
    const forwardHeaders: Record<string, string> = {};
    for (const [name, value] of Object.entries(parts.headers)) {
      if (typeof value === 'string' && (name.startsWith(IDENTITY_PREFIX) || FORWARDED.includes(name))) forwardHeaders[name] = value;
    }
    return {
      method: parts.method,
      path: parts.path,
      query: parts.query ?? new URLSearchParams(),
      headers: parts.headers,
      body: parts.body,
      identity,
      requestedLevels: parseLevelsHeader(header(LEVELS_HEADER)),
      signal: parts.signal,
      forwardHeaders,
    };
  }

  /** Count a request served by another protocol (gRPC) as the HTTP routes are counted. */
  observe(route: string, status: string, seconds: number): void {
    this.metrics.requests.inc({ route, status });
    this.metrics.duration.observe({ route }, seconds);
  }

  #failure(error: unknown): [number, unknown] {
    if (error instanceof HttpError) {
      this.metrics.errors.inc({ kind: error.status >= 500 ? 'server' : 'client' });
      return [error.status, { error: error.message }];
    }
    if (error instanceof WorkerCrashedError) {
      this.metrics.errors.inc({ kind: 'worker-crash' });
      return [500, { error: error.message }];
    }
    if (error instanceof NoWorkerAvailableError) {
      this.metrics.errors.inc({ kind: 'unavailable' });
      return [503, { error: error.message }];
    }
    if (error instanceof DownstreamError) {
      this.metrics.errors.inc({ kind: 'downstream' });
      return [error.status === 504 ? 504 : 502, { error: error.message }];
    }
    this.metrics.errors.inc({ kind: 'exception' });
    return [500, { error: error instanceof Error ? error.message : String(error) }];
  }
}

/** Read and parse a JSON body, refusing more than `limit` bytes. */
async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new HttpError(413, `body larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    throw new HttpError(400, `body is not valid JSON: ${(error as Error).message}`);
  }
}
