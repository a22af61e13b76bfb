/**
 * The send side of a paired replay: one connection pool per arm (and
 * control′), in-flight counts against the cap, error counts, and the outcome
 * of every measurement-window request. The send path runs thousands of times
 * a second: callbacks and listeners, no promise chain, and a one-shot hash of
 * the (usually single-chunk) body.
 */
import { BodyCopy, transportFailureOf } from '../net/index.js';
import { setMaxListeners } from 'node:events';
import { Pool } from 'undici';
import type { Clock, CorpusRecord, ErrorClass, RequestOutcome, ResponseView } from '../core/index.js';
import { phaseOf, type ArmName } from './schedule.js';
import { comparableResponse } from './response-view.js';
import { H2Sessions, type H2SessionsOptions } from './h2-sessions.js';
import { grpcHeaders, grpcOutcomeOf } from './grpc-exchange.js';

/** Arms a request can go to: the pair, and the optional second control. */
export type SendArm = ArmName | 'control-prime';

export interface ArmSendersOptions {
  /** Each arm's base URL, or the URLs of its processes when it runs several (`trials.processes`). */
  readonly arms: Readonly<Record<ArmName, string | readonly string[]>>;
  readonly controlPrime?: string;
  /** In-flight cap per arm (and the pool's connections). */
  readonly concurrency: number;
  readonly timeoutMs: number;
  readonly clock: Clock;
  readonly identity: { readonly experimentId: string; readonly trial: number; readonly attempt: number };
  /** The window's start on the monotonic and the epoch clock, and its warm-up: only measurement outcomes are handed on. */
  readonly startMono: number;
  readonly startEpoch: number;
  readonly warmupMs: number;
  /** Decoded response bodies up to this many bytes are kept for comparison; 0 keeps nothing. */
  readonly keepBodyBytes: number;
  /** How gRPC records travel: HTTP/2 connections per process and streams per connection. */
  readonly http2?: H2SessionsOptions;
  readonly onOutcome: (outcome: RequestOutcome) => void;
}

/** The error class of a request that failed before its answer ended (net/transport-errors.ts). */
function classify(error: unknown): ErrorClass {
  const failure = transportFailureOf(error);
  return failure === 'aborted' ? 'cancelled' : failure;
}

export class ArmSenders {
  readonly inflight: Record<SendArm, number> = { control: 0, treatment: 0, 'control-prime': 0 };
  readonly sent: Record<SendArm, number> = { control: 0, treatment: 0, 'control-prime': 0 };
  readonly errors: Record<SendArm, Record<string, number>> = { control: {}, treatment: {}, 'control-prime': {} };
  readonly connectionErrors: Record<SendArm, number> = { control: 0, treatment: 0, 'control-prime': 0 };
  readonly hasControlPrime: boolean;
  /** One pool per process of each arm; control′ has one process. */
  private readonly pools: Partial<Record<SendArm, readonly Pool[]>>;
  /** HTTP/2 sessions per process of each arm, opened on the first gRPC record. */
  private readonly h2: Partial<Record<SendArm, H2Sessions[]>> = {};
  private readonly urls: Partial<Record<SendArm, readonly string[]>>;
  /** Processes per arm: an outcome names the process that answered when there are several. */
  readonly processes: Readonly<Record<ArmName, number>>;
  private readonly sendArms: SendArm[];
  private readonly stopped = new AbortController();
  private readonly options: ArmSendersOptions;
  private notifySlot: (() => void) | undefined;
  private notifyDrained: (() => void) | undefined;

  constructor(options: ArmSendersOptions) {
    this.options = options;
    const poolOf = (url: string): Pool =>
      new Pool(url, { connections: options.concurrency, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs, keepAliveTimeout: 10_000 });
    const urls = (arm: ArmName): readonly string[] => (typeof options.arms[arm] === 'string' ? [options.arms[arm]] : options.arms[arm]);
    this.urls = {
      control: urls('control'),
      treatment: urls('treatment'),
      ...(options.controlPrime !== undefined ? { 'control-prime': [options.controlPrime] } : {}),
    };
    this.pools = {
      control: urls('control').map(poolOf),
      treatment: urls('treatment').map(poolOf),
      ...(options.controlPrime !== undefined ? { 'control-prime': [poolOf(options.controlPrime)] } : {}),
    };
    this.processes = { control: urls('control').length, treatment: urls('treatment').length };
    this.sendArms = Object.keys(this.pools) as SendArm[];
    this.hasControlPrime = options.controlPrime !== undefined;
    // Every in-flight request listens on this one signal.
    setMaxListeners(Number.POSITIVE_INFINITY, this.stopped.signal);
    this.stopped.signal.addEventListener('abort', () => this.notifySlot?.(), { once: true });
  }

  /** Aborted by `stop`: the schedule loop ends when it is. */
  get signal(): AbortSignal {
    return this.stopped.signal;
  }

  /** Cancel every in-flight request: one destroy per pool, cheaper than a signal listener per request. */
  stop(reason: unknown): void {
    this.stopped.abort(reason);
    for (const arm of this.sendArms) for (const pool of this.pools[arm]!) void pool.destroy(new Error('replay cancelled'));
    this.#closeH2();
  }

  #closeH2(): void {
    for (const arm of this.sendArms) for (const sessions of this.h2[arm] ?? []) sessions?.close();
  }

  #h2(arm: SendArm, process: number): H2Sessions {
    const list = (this.h2[arm] ??= []);
    return (list[process] ??= new H2Sessions(this.urls[arm]![process]!, this.options.http2));
  }

  get inflightTotal(): number {
    return this.inflight.control + this.inflight.treatment + this.inflight['control-prime'];
  }

  errorTotal(arm: ArmName): number {
    let total = 0;
    for (const kind in this.errors[arm]) total += this.errors[arm][kind]!;
    return total;
  }

  /** Resolves when any in-flight request finishes (or the replay is stopped). */
  slotFreed(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.notifySlot = resolve;
      if (this.stopped.signal.aborted) resolve();
    });
  }

  /** Resolves when nothing is in flight. */
  async drained(): Promise<void> {
    if (this.inflightTotal > 0) await new Promise<void>((resolve) => (this.notifyDrained = resolve));
  }

  async close(): Promise<void> {
    this.#closeH2();
    await Promise.all(this.sendArms.flatMap((arm) => this.pools[arm]!.map((pool) => pool.destroy())));
  }

  /** Sends one request to `process` of the arm (0 for an arm of one process and for control′). */
  send(arm: SendArm, record: CorpusRecord, headers: string[], body: Buffer | null, dueMono: number, first: boolean, process = 0): void {
    this.inflight[arm]++;
    this.sent[arm]++;
    if (record.grpc !== undefined) return this.#sendGrpc(arm, record, headers, body, dueMono, first, process);
    let status = 0;
    let responseHeaders: Record<string, string | string[] | undefined> = {};
    let finished = false;
    const answer = new BodyCopy(readBytesFor(this.options.keepBodyBytes), { hash: true });
    const finish = (outcomeError: ErrorClass): void => {
      if (finished) return;
      finished = true;
      const errorClass: ErrorClass = outcomeError !== '' && this.stopped.signal.aborted ? 'cancelled' : outcomeError;
      if (this.#settle(arm, dueMono, errorClass)) this.#handOn(arm, record, dueMono, first, status, answer, responseHeaders, errorClass, process);
      answer.release();
      this.#drainedCheck();
    };
    this.pools[arm]![process]!.request({ path: record.path, method: record.method as 'GET', headers, body }, (error, response) => {
      if (error) return finish(classify(error));
      status = response.statusCode;
      if (this.options.keepBodyBytes > 0) responseHeaders = response.headers;
      const stream = response.body;
      stream.on('data', (chunk: Buffer) => answer.add(chunk));
      stream.once('end', () => finish(status >= 500 ? '5xx' : status >= 400 ? '4xx' : ''));
      stream.once('error', (streamError: Error) => finish(classify(streamError)));
    });
  }

  /** The bookkeeping of an ended request: in-flight, errors, wake-ups. Returns whether its outcome is handed on. */
  #settle(arm: SendArm, dueMono: number, errorClass: ErrorClass): boolean {
    this.inflight[arm]--;
    this.notifySlot?.();
    this.notifySlot = undefined;
    if (errorClass === 'refused' || errorClass === 'reset') this.connectionErrors[arm]++;
    if (errorClass !== '') this.errors[arm][errorClass] = (this.errors[arm][errorClass] ?? 0) + 1;
    const handOn = errorClass !== 'cancelled' && phaseOf(dueMono, this.options.startMono, this.options.warmupMs) === 'measure';
    return handOn;
  }

  #drainedCheck(): void {
    if (this.inflightTotal === 0) this.notifyDrained?.();
  }

  /** A gRPC record over HTTP/2: its status decides its error class (grpc-exchange.ts). */
  #sendGrpc(arm: SendArm, record: CorpusRecord, headers: string[], body: Buffer | null, dueMono: number, first: boolean, process: number): void {
    const { timeoutMs, keepBodyBytes } = this.options;
    const { requestHeaders, deadlineMs } = grpcHeaders(record, headers, this.urls[arm]![process]!, timeoutMs);
    this.#h2(arm, process).request(requestHeaders, body, deadlineMs, readBytesFor(keepBodyBytes), (exchange) => {
      const result = grpcOutcomeOf(exchange, record, keepBodyBytes);
      exchange.body.release();
      const errorClass: ErrorClass = result.errorClass !== '' && this.stopped.signal.aborted ? 'cancelled' : result.errorClass;
      if (this.#settle(arm, dueMono, errorClass)) {
        this.#emit(
          arm,
          record,
          dueMono,
          first,
          process,
          { status: exchange.status, bytes: exchange.body.size, errorClass, bodyHash: result.bodyHash, grpcStatus: result.grpcStatus },
          result.body,
          result.view,
        );
      }
      this.#drainedCheck();
    });
  }

  #handOn(
    arm: SendArm,
    record: CorpusRecord,
    dueMono: number,
    first: boolean,
    status: number,
    response: BodyCopy,
    responseHeaders: Record<string, string | string[] | undefined>,
    errorClass: ErrorClass,
    process: number,
  ): void {
    const { keepBodyBytes } = this.options;
    const bodyHash = status === 0 ? '' : response.digest();
    const compared =
      keepBodyBytes > 0 && status !== 0
        ? response.truncated
          ? tooLargeToCompare(record, response)
          : comparableResponse(response.bytes(), responseHeaders, record, keepBodyBytes, bodyHash)
        : undefined;
    this.#emit(arm, record, dueMono, first, process, { status, bytes: response.size, errorClass, bodyHash }, compared?.body, compared?.view);
  }

  /** One measurement-window outcome, whatever protocol carried it, handed on. */
  #emit(
    arm: SendArm,
    record: CorpusRecord,
    dueMono: number,
    first: boolean,
    process: number,
    answer: Pick<RequestOutcome, 'status' | 'bytes' | 'errorClass' | 'bodyHash' | 'grpcStatus'>,
    body: Buffer | undefined,
    view: ResponseView | undefined,
  ): void {
    const { identity, clock, startEpoch, startMono } = this.options;
    this.options.onOutcome({
      experimentId: identity.experimentId,
      trial: identity.trial,
      attempt: identity.attempt,
      arm,
      recordId: record.id,
      intendedMs: startEpoch + (dueMono - startMono),
      latencyMs: clock.monotonic() - dueMono,
      ...answer,
      first,
      ...(body !== undefined ? { body: body.toString('base64') } : {}),
      ...(view ? { response: view } : {}),
      ...(arm !== 'control-prime' && this.processes[arm] > 1 ? { process } : {}),
    });
  }
}

/**
 * The most of one answer the replayer reads for comparison (hashed and counted whole, whatever its size): a
 * comparison keeps a little of each answer, and hashes the rest; 16 MiB also bounds what one call holds. None
 * without comparison.
 */
export const MAX_READ_RESPONSE_BYTES = 16 * 1_048_576;
const readBytesFor = (keepBodyBytes: number): number => (keepBodyBytes > 0 ? MAX_READ_RESPONSE_BYTES : 0);

function tooLargeToCompare(record: CorpusRecord, response: BodyCopy): { view: ResponseView; body?: undefined } {
  return {
    view: {
      method: record.method,
      path: record.path,
      decodedBytes: 0,
      contentHash: '',
      skipped: `response of ${response.size} bytes, over the ${response.limit} the replayer reads for comparison`,
    },
  };
}
