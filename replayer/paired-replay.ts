/**
 * One paired trial: every corpus record is sent to both arms, open loop at
 * the workload's rate, the first side chosen by a seeded RNG. Latency runs
 * from the intended send time, so a stalled arm cannot hide its tail behind
 * a late send (no coordinated omission). When an arm's in-flight cap is
 * reached the pair is dropped and counted, never silently delayed. Only
 * outcomes from the measurement window are handed on.
 */
import { hash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { Pool } from 'undici';
import type { Clock, CorpusRecord, ErrorClass, RequestOutcome } from '../core/index.js';
import { firstSides, intendedTime, pairsInWindow, phaseOf, type ArmName } from './schedule.js';
import { comparableResponse } from './response-view.js';

/** Record headers that are not replayed: hop-by-hop ones, and those the client recomputes. */
const NOT_REPLAYED = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'content-length', 'expect']);

export interface TrialIdentity {
  readonly experimentId: string;
  readonly trial: number;
  readonly attempt: number;
  /** Prefix of the identity headers, e.g. "x-tandem-". */
  readonly headerPrefix: string;
  /** The deployment (job) name of each arm, for downstream attribution. */
  readonly jobs: Readonly<Record<ArmName, string>>;
}

export interface ReplayProgress {
  readonly phase: 'warmup' | 'measure';
  readonly elapsedMs: number;
  readonly remainingMs: number;
  readonly sentPairs: number;
  readonly droppedPairs: number;
  readonly inflight: Readonly<Record<ArmName, number>>;
  readonly errors: Readonly<Record<ArmName, number>>;
  /** Pairs per second over the last progress interval. */
  readonly rate: number;
}

export interface PairedReplayOptions {
  readonly records: AsyncIterable<CorpusRecord>;
  /** Base URL of each arm. */
  readonly arms: Readonly<Record<ArmName, string>>;
  /**
   * A second copy of control (Diffy's noise cancellation): each pair's record is
   * also sent here, after the pair, for response comparison only. It never
   * drops a pair: when it is at its cap its copy is skipped and counted.
   */
  readonly controlPrime?: string;
  /** Extra headers for one arm's requests only, e.g. a test-scenario header forcing a degradation state on the treatment. */
  readonly armHeaders?: Readonly<Partial<Record<ArmName, Readonly<Record<string, string>>>>>;
  /** Pairs per second (each arm receives this many requests per second). */
  readonly ratePerSecond: number;
  /** In-flight cap per arm. */
  readonly concurrency: number;
  readonly timeoutMs: number;
  readonly warmupMs: number;
  readonly measureMs: number;
  readonly seed: number;
  readonly identity: TrialIdentity;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
  /** Compare responses: decoded bodies up to this many bytes are kept whole, larger ones by hash and sketch (see response-view.ts); 0 keeps nothing. @default 0 */
  readonly keepBodyBytes?: number;
  /** Called for every measurement-window outcome. */
  readonly onOutcome: (outcome: RequestOutcome) => void;
  readonly onProgress?: (progress: ReplayProgress) => void;
  /** Called once, just before the first pair of the measurement window is sent (a deployed arm's CPU is read then). */
  readonly onMeasureStart?: () => void;
  /** @default 1000 */
  readonly progressIntervalMs?: number;
}

export interface PairedReplayResult {
  /** Epoch ms of the first intended send. */
  readonly startedAtMs: number;
  readonly durationMs: number;
  readonly sentPairs: number;
  readonly warmupPairs: number;
  readonly measuredPairs: number;
  /** Pairs not sent because an arm was at its in-flight cap. */
  readonly droppedPairs: number;
  /** Pairs whose intended time fell in the window: due = sent + dropped + cut, exactly. */
  readonly duePairs: number;
  /** Due pairs never sent nor dropped: the window ended while behind schedule, the corpus ran out, or the replay was cancelled. */
  readonly cutPairs: number;
  /** Records skipped because their body was not stored. */
  readonly skippedTruncated: number;
  /** Largest and mean delay of a send behind its intended time, ms. */
  readonly maxLagMs: number;
  readonly meanLagMs: number;
  readonly targetRate: number;
  /** Pairs per second actually sent in the measurement window. */
  readonly achievedRate: number;
  readonly firstSide: Readonly<Record<ArmName, number>>;
  readonly errors: Readonly<Record<ArmName, Readonly<Record<string, number>>>>;
  /** Share of sends to each arm that failed to connect or were reset. */
  readonly connectionErrorShare: Readonly<Record<ArmName, number>>;
  readonly cancelled: boolean;
  /** The corpus ran out before the measurement window ended. */
  readonly corpusExhausted: boolean;
  /** Records not sent to control-prime because it was at its cap. */
  readonly controlPrimeSkipped: number;
}

/** Arms a request can go to: the pair, and the optional second control. */
type SendArm = ArmName | 'control-prime';

function classify(error: unknown): ErrorClass {
  const code = (error as { code?: string }).code ?? '';
  const name = (error as { name?: string }).name ?? '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return 'timeout';
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return 'reset';
  if (code === 'UND_ERR_ABORTED' || name === 'AbortError') return 'cancelled';
  return 'other';
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export async function pairedReplay(options: PairedReplayOptions): Promise<PairedReplayResult> {
  const { clock, identity } = options;
  const prefix = identity.headerPrefix;
  const [experimentHeader, trialHeader, recordHeader, armHeader, jobHeader] = ['experiment', 'trial', 'record', 'arm', 'job'].map((h) => `${prefix}${h}`) as [string, string, string, string, string];
  const trialValue = String(identity.trial);
  const abortSends = new AbortController();
  // Every in-flight request listens on this one signal.
  setMaxListeners(Number.POSITIVE_INFINITY, abortSends.signal);
  const onCancel = (): void => {
    abortSends.abort(options.signal?.reason);
    // One destroy aborts every in-flight request: cheaper than a signal listener per request.
    for (const arm of sendArms) void pools[arm]!.destroy(new Error('replay cancelled'));
  };
  const poolOf = (url: string): Pool => new Pool(url, { connections: options.concurrency, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs, keepAliveTimeout: 10_000 });
  const pools: Partial<Record<SendArm, Pool>> & Record<ArmName, Pool> = { control: poolOf(options.arms.control), treatment: poolOf(options.arms.treatment) };
  if (options.controlPrime !== undefined) pools['control-prime'] = poolOf(options.controlPrime);
  const sendArms = Object.keys(pools) as SendArm[];
  if (options.signal?.aborted) onCancel();
  else options.signal?.addEventListener('abort', onCancel, { once: true });
  const inflight: Record<SendArm, number> = { control: 0, treatment: 0, 'control-prime': 0 };
  const sent: Record<SendArm, number> = { control: 0, treatment: 0, 'control-prime': 0 };
  const errors: Record<SendArm, Record<string, number>> = { control: {}, treatment: {}, 'control-prime': {} };
  const connectionErrors: Record<SendArm, number> = { control: 0, treatment: 0, 'control-prime': 0 };
  let controlPrimeSkipped = 0;
  const firstSide: Record<ArmName, number> = { control: 0, treatment: 0 };
  let notifySlot: (() => void) | undefined;
  /** Resolves when any in-flight request finishes (or the replay is cancelled). */
  const slotFreed = (): Promise<void> =>
    new Promise<void>((resolve) => {
      notifySlot = resolve;
      if (abortSends.signal.aborted) resolve();
    });
  abortSends.signal.addEventListener('abort', () => notifySlot?.(), { once: true });
  const nextFirst = firstSides(options.seed);
  const keepBody = options.keepBodyBytes ?? 0;

  const startMono = clock.monotonic();
  const startEpoch = clock.now();
  const endMono = startMono + options.warmupMs + options.measureMs;
  const windowPairs = pairsInWindow(options.ratePerSecond, options.warmupMs + options.measureMs);
  let sentPairs = 0;
  let warmupPairs = 0;
  let droppedPairs = 0;
  let skippedTruncated = 0;
  let maxLag = 0;
  let lagSum = 0;
  let corpusExhausted = false;
  let measureStarted = false;
  let lastProgress = { at: startMono, pairs: 0 };

  const report = (nowMono: number): void => {
    if (!options.onProgress) return;
    const elapsed = nowMono - startMono;
    options.onProgress({
      phase: elapsed < options.warmupMs ? 'warmup' : 'measure',
      elapsedMs: elapsed,
      remainingMs: Math.max(0, endMono - nowMono),
      sentPairs,
      droppedPairs,
      inflight: { control: inflight.control, treatment: inflight.treatment },
      errors: { control: Object.values(errors.control).reduce((a, b) => a + b, 0), treatment: Object.values(errors.treatment).reduce((a, b) => a + b, 0) },
      rate: ((sentPairs - lastProgress.pairs) * 1000) / Math.max(1, nowMono - lastProgress.at),
    });
    lastProgress = { at: nowMono, pairs: sentPairs };
  };

  let drained: (() => void) | undefined;
  // The send path runs thousands of times a second: callbacks and listeners, no promise chain,
  // and a one-shot hash of the (usually single-chunk) body.
  const send = (arm: SendArm, record: CorpusRecord, headers: Readonly<Record<SendArm, string[]>>, body: Buffer | null, dueMono: number, first: boolean): void => {
    inflight[arm]++;
    sent[arm]++;
    let status = 0;
    let bytes = 0;
    let responseHeaders: Record<string, string | string[] | undefined> = {};
    let finished = false;
    const chunks: Buffer[] = [];
    const finish = (outcomeError: ErrorClass): void => {
      if (finished) return;
      finished = true;
      inflight[arm]--;
      notifySlot?.();
      notifySlot = undefined;
      const errorClass: ErrorClass = outcomeError !== '' && abortSends.signal.aborted ? 'cancelled' : outcomeError;
      if (errorClass === 'refused' || errorClass === 'reset') connectionErrors[arm]++;
      if (errorClass !== '') errors[arm][errorClass] = (errors[arm][errorClass] ?? 0) + 1;
      if (errorClass !== 'cancelled' && phaseOf(dueMono, startMono, options.warmupMs) === 'measure') {
        const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        const bodyHash = status === 0 ? '' : hash('sha1', all);
        const compared = keepBody > 0 && status !== 0 ? comparableResponse(all, responseHeaders, record, keepBody, bodyHash) : undefined;
        options.onOutcome({
          experimentId: identity.experimentId,
          trial: identity.trial,
          attempt: identity.attempt,
          arm,
          recordId: record.id,
          intendedMs: startEpoch + (dueMono - startMono),
          latencyMs: clock.monotonic() - dueMono,
          status,
          bytes,
          errorClass,
          bodyHash,
          first,
          ...(compared?.body !== undefined ? { body: compared.body.toString('base64') } : {}),
          ...(compared ? { response: compared.view } : {}),
        });
      }
      if (inflight.control + inflight.treatment + inflight['control-prime'] === 0) drained?.();
    };
    pools[arm]!.request(
      { path: record.path, method: record.method as 'GET', headers: headers[arm], body },
      (error, response) => {
        if (error) return finish(classify(error));
        status = response.statusCode;
        if (keepBody > 0) responseHeaders = response.headers;
        const stream = response.body;
        stream.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          chunks.push(chunk);
        });
        stream.once('end', () => finish(status >= 500 ? '5xx' : status >= 400 ? '4xx' : ''));
        stream.once('error', (streamError: Error) => finish(classify(streamError)));
      },
    );
  };

  const extraControl = Object.entries(options.armHeaders?.control ?? {}).flat();
  const extraTreatment = Object.entries(options.armHeaders?.treatment ?? {}).flat();
  const records = options.records[Symbol.asyncIterator]();
  let carried: CorpusRecord | undefined;
  let sinceYield = 0;
  try {
    for (let index = 0; ; ) {
      if (abortSends.signal.aborted) break;
      const dueMono = intendedTime(startMono, options.ratePerSecond, index);
      // By count, not by comparing floats: the window holds exactly windowPairs pairs, whatever the start value.
      if (index >= windowPairs) break;
      let record: CorpusRecord;
      if (carried) {
        record = carried;
        carried = undefined;
      } else {
        const next = await records.next();
        if (next.done) {
          corpusExhausted = true;
          break;
        }
        record = next.value;
      }
      if (record.bodyTruncated) {
        skippedTruncated++;
        continue;
      }
      let now = clock.monotonic();
      if (dueMono > now) {
        sinceYield = 0;
        // Timers have millisecond granularity and may fire early: sleep the whole milliseconds,
        // then yield to the event loop until the send is due, so no request leaves before its time.
        if (dueMono - now >= 1) {
          try {
            await clock.sleep(Math.floor(dueMono - now), abortSends.signal);
          } catch {
            break;
          }
        }
        while ((now = clock.monotonic()) < dueMono && !abortSends.signal.aborted) await yieldToEventLoop();
        if (abortSends.signal.aborted) break;
      } else if (++sinceYield >= 16) {
        // Behind schedule: still let responses in, or the backlog only grows.
        sinceYield = 0;
        await yieldToEventLoop();
        now = clock.monotonic();
      }
      // Bounded in time as well as by the schedule: a loop far behind schedule ends with the window.
      if (now >= endMono) break;
      if (now - lastProgress.at >= (options.progressIntervalMs ?? 1_000)) report(now);
      index++;
      const lag = Math.max(0, now - dueMono);
      maxLag = Math.max(maxLag, lag);
      lagSum += lag;
      if (inflight.control >= options.concurrency || inflight.treatment >= options.concurrency) {
        // At the cap: this pair is dropped, and so is every pair that falls due while waiting
        // for a slot — counted, not sent late, and without spinning through the corpus.
        droppedPairs++;
        carried = record; // a dropped pair consumes no record: it goes with the next pair sent
        await slotFreed();
        // The cap comes from the configured window, not from endMono - startMono, whose float rounding could admit one pair too many.
        const caughtUp = Math.min(Math.floor(((clock.monotonic() - startMono) * options.ratePerSecond) / 1000), windowPairs);
        if (caughtUp > index) {
          droppedPairs += caughtUp - index;
          index = caughtUp;
        }
        continue;
      }
      // Flat [name, value, …] arrays: undici takes them without the per-key work of objects.
      const shared: string[] = [];
      for (const name in record.headers) if (!NOT_REPLAYED.has(name)) shared.push(name, record.headers[name]!);
      shared.push(experimentHeader, identity.experimentId, trialHeader, trialValue, recordHeader, record.id);
      const headers = {
        control: [...shared, armHeader, 'control', jobHeader, identity.jobs.control, ...extraControl],
        treatment: [...shared, armHeader, 'treatment', jobHeader, identity.jobs.treatment, ...extraTreatment],
        'control-prime': [...shared, armHeader, 'control-prime', jobHeader, `${identity.experimentId}.control-prime`],
      };
      const body = record.body === '' ? null : Buffer.from(record.body, 'base64');
      const first = nextFirst();
      firstSide[first]++;
      const second: ArmName = first === 'control' ? 'treatment' : 'control';
      if (!measureStarted && phaseOf(dueMono, startMono, options.warmupMs) === 'measure') {
        measureStarted = true;
        options.onMeasureStart?.();
      }
      send(first, record, headers, body, dueMono, true);
      send(second, record, headers, body, dueMono, false);
      if (pools['control-prime']) {
        if (inflight['control-prime'] < options.concurrency) send('control-prime', record, headers, body, dueMono, false);
        else controlPrimeSkipped++;
      }
      sentPairs++;
      if (phaseOf(dueMono, startMono, options.warmupMs) === 'warmup') warmupPairs++;
    }
    if (inflight.control + inflight.treatment + inflight['control-prime'] > 0) await new Promise<void>((resolve) => (drained = resolve));
  } finally {
    options.signal?.removeEventListener('abort', onCancel);
    await records.return?.();
    await Promise.all(sendArms.map((arm) => pools[arm]!.destroy()));
  }
  const endedMono = clock.monotonic();
  const measuredPairs = sentPairs - warmupPairs;
  const measureSpan = Math.min(options.measureMs, Math.max(0, endedMono - startMono - options.warmupMs));
  return {
    startedAtMs: startEpoch,
    durationMs: endedMono - startMono,
    sentPairs,
    warmupPairs,
    measuredPairs,
    droppedPairs,
    duePairs: windowPairs,
    cutPairs: Math.max(0, windowPairs - sentPairs - droppedPairs),
    skippedTruncated,
    maxLagMs: maxLag,
    meanLagMs: sentPairs + droppedPairs > 0 ? lagSum / (sentPairs + droppedPairs) : 0,
    targetRate: options.ratePerSecond,
    achievedRate: measureSpan > 0 ? (measuredPairs * 1000) / options.measureMs : 0,
    firstSide,
    errors: { control: errors.control, treatment: errors.treatment },
    connectionErrorShare: { control: sent.control > 0 ? connectionErrors.control / sent.control : 0, treatment: sent.treatment > 0 ? connectionErrors.treatment / sent.treatment : 0 },
    cancelled: options.signal?.aborted ?? false,
    corpusExhausted,
    controlPrimeSkipped,
  };
}
