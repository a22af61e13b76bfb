/**
 * One paired trial: every corpus record is sent to both arms, open loop at
 * the workload's rate, the first side chosen by a seeded RNG. Latency runs
 * from the intended send time, so a stalled arm cannot hide its tail behind
 * a late send (no coordinated omission). When an arm's in-flight cap is
 * reached the pair is dropped and counted, never silently delayed. Only
 * outcomes from the measurement window are handed on.
 */
import type { Clock, CorpusRecord, RequestOutcome } from '../core/index.js';
import { HOP_BY_HOP_HEADERS } from '../net/index.js';
import { firstSides, intendedTime, pairsInWindow, phaseOf, type ArmName } from './schedule.js';
import { ArmSenders, type SendArm } from './arm-senders.js';

/** Record headers that are not replayed: hop-by-hop ones, and those the client recomputes. */
const NOT_REPLAYED = new Set([...HOP_BY_HOP_HEADERS, 'host', 'content-length', 'expect']);

export interface TrialIdentity {
  readonly experimentId: string;
  readonly trial: number;
  readonly attempt: number;
  /** Prefix of the identity headers, e.g. "x-tandem-". */
  readonly headerPrefix: string;
  /** The deployment (job) name of each arm, for downstream attribution. */
  readonly jobs: Readonly<Record<ArmName, string>>;
}

/** Attempt `attempt` of trial `trial`, as its requests say it: each arm's job is `<experiment>.<arm>`. */
export function trialIdentity(experimentId: string, headerPrefix: string, trial: number, attempt: number): TrialIdentity {
  return { experimentId, trial, attempt, headerPrefix, jobs: { control: `${experimentId}.control`, treatment: `${experimentId}.treatment` } };
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
  /**
   * Base URL of each arm, or of each of its processes (`trials.processes`). Every record goes to every process
   * of both arms, so each process is measured on the same requests as every other: splitting the records
   * between them left each process a different third of the corpus, and the mix alone moved a process's CPU
   * per request by 5–10% (docs/harness.md), more than the effects the processes are there to resolve. The rate
   * is per process (the trial runner divides the workload's rate among an arm's processes, so the arm and its
   * dependencies get `replay.rate` whatever their count); in-flight caps are per process too.
   */
  readonly arms: Readonly<Record<ArmName, string | readonly string[]>>;
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
  /** HTTP/2 connections per process and streams per connection, for gRPC records. */
  readonly http2?: { readonly connections?: number; readonly maxConcurrentStreams?: number };
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

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Each arm's headers for a record, as flat [name, value, …] arrays (undici takes them without the per-key
 * work of objects): the recorded headers that are replayed, the trial's identity, the arm's own extras.
 */
export function headerBuilder(identity: TrialIdentity, armHeaders: PairedReplayOptions['armHeaders']): (record: CorpusRecord) => Record<SendArm, string[]> {
  const prefix = identity.headerPrefix;
  const [experimentHeader, trialHeader, recordHeader, armHeader, jobHeader] = ['experiment', 'trial', 'record', 'arm', 'job'].map((h) => `${prefix}${h}`) as [
    string,
    string,
    string,
    string,
    string,
  ];
  const trialValue = String(identity.trial);
  const control = [armHeader, 'control', jobHeader, identity.jobs.control, ...Object.entries(armHeaders?.control ?? {}).flat()];
  const treatment = [armHeader, 'treatment', jobHeader, identity.jobs.treatment, ...Object.entries(armHeaders?.treatment ?? {}).flat()];
  const prime = [armHeader, 'control-prime', jobHeader, `${identity.experimentId}.control-prime`];
  return (record) => {
    const shared: string[] = [];
    for (const name in record.headers) if (!NOT_REPLAYED.has(name)) shared.push(name, record.headers[name]!);
    shared.push(experimentHeader, identity.experimentId, trialHeader, trialValue, recordHeader, record.id);
    return { control: [...shared, ...control], treatment: [...shared, ...treatment], 'control-prime': [...shared, ...prime] };
  };
}

/**
 * Wait until `dueMono`: timers have millisecond granularity and may fire early, so sleep the whole
 * milliseconds, then yield to the event loop until the send is due — no request leaves before its time.
 * Returns the monotonic time, or undefined when the replay stopped meanwhile.
 */
async function waitUntilDue(clock: Clock, dueMono: number, signal: AbortSignal): Promise<number | undefined> {
  let now = clock.monotonic();
  if (dueMono - now >= 1) {
    try {
      await clock.sleep(Math.floor(dueMono - now), signal);
    } catch {
      return undefined;
    }
  }
  while ((now = clock.monotonic()) < dueMono && !signal.aborted) await yieldToEventLoop();
  return signal.aborted ? undefined : now;
}

/** What the schedule loop counted. */
interface ScheduleCounts {
  sentPairs: number;
  warmupPairs: number;
  droppedPairs: number;
  skippedTruncated: number;
  controlPrimeSkipped: number;
  maxLag: number;
  lagSum: number;
  corpusExhausted: boolean;
  readonly firstSide: Record<ArmName, number>;
}

export async function pairedReplay(options: PairedReplayOptions): Promise<PairedReplayResult> {
  const { clock } = options;
  const startMono = clock.monotonic();
  const startEpoch = clock.now();
  const senders = new ArmSenders({ ...options, keepBodyBytes: options.keepBodyBytes ?? 0, startMono, startEpoch });
  const onCancel = (): void => senders.stop(options.signal?.reason);
  if (options.signal?.aborted) onCancel();
  else options.signal?.addEventListener('abort', onCancel, { once: true });
  const counts: ScheduleCounts = {
    sentPairs: 0,
    warmupPairs: 0,
    droppedPairs: 0,
    skippedTruncated: 0,
    controlPrimeSkipped: 0,
    maxLag: 0,
    lagSum: 0,
    corpusExhausted: false,
    firstSide: { control: 0, treatment: 0 },
  };
  const windowPairs = pairsInWindow(options.ratePerSecond, options.warmupMs + options.measureMs);
  const records = options.records[Symbol.asyncIterator]();
  try {
    await runSchedule(options, senders, records, counts, startMono, windowPairs);
    await senders.drained();
  } finally {
    options.signal?.removeEventListener('abort', onCancel);
    await records.return?.();
    await senders.close();
  }
  const durationMs = clock.monotonic() - startMono;
  const { sentPairs, droppedPairs } = counts;
  const measuredPairs = sentPairs - counts.warmupPairs;
  const measureSpan = Math.min(options.measureMs, Math.max(0, durationMs - options.warmupMs));
  const { sent, connectionErrors, errors } = senders;
  return {
    startedAtMs: startEpoch,
    durationMs,
    sentPairs,
    warmupPairs: counts.warmupPairs,
    measuredPairs,
    droppedPairs,
    duePairs: windowPairs,
    cutPairs: Math.max(0, windowPairs - sentPairs - droppedPairs),
    skippedTruncated: counts.skippedTruncated,
    maxLagMs: counts.maxLag,
    meanLagMs: sentPairs + droppedPairs > 0 ? counts.lagSum / (sentPairs + droppedPairs) : 0,
    targetRate: options.ratePerSecond,
    achievedRate: measureSpan > 0 ? (measuredPairs * 1000) / options.measureMs : 0,
    firstSide: counts.firstSide,
    errors: { control: errors.control, treatment: errors.treatment },
    connectionErrorShare: {
      control: sent.control > 0 ? connectionErrors.control / sent.control : 0,
      treatment: sent.treatment > 0 ? connectionErrors.treatment / sent.treatment : 0,
    },
    cancelled: options.signal?.aborted ?? false,
    corpusExhausted: counts.corpusExhausted,
    controlPrimeSkipped: counts.controlPrimeSkipped,
  };
}

/**
 * The open-loop schedule: pair i falls due at start + i/rate; each is sent on time to both arms (first
 * side seeded), dropped when an arm is at its cap, or cut when the window ends first.
 */
async function runSchedule(
  options: PairedReplayOptions,
  senders: ArmSenders,
  records: AsyncIterator<CorpusRecord>,
  counts: ScheduleCounts,
  startMono: number,
  windowPairs: number,
): Promise<void> {
  const { clock } = options;
  const stopped = senders.signal;
  const headersFor = headerBuilder(options.identity, options.armHeaders);
  const nextFirst = firstSides(options.seed);
  const endMono = startMono + options.warmupMs + options.measureMs;
  const progress = progressReporter(options, senders, counts, startMono, endMono);
  let measureStarted = false;
  let carried: CorpusRecord | undefined;
  let sinceYield = 0;
  // By count, not by comparing floats: the window holds exactly windowPairs pairs, whatever the start value.
  for (let index = 0; index < windowPairs && !stopped.aborted;) {
    const dueMono = intendedTime(startMono, options.ratePerSecond, index);
    let record = carried;
    carried = undefined;
    if (record === undefined) {
      const next = await records.next();
      if (next.done) {
        counts.corpusExhausted = true;
        return;
      }
      record = next.value;
    }
    if (record.bodyTruncated) {
      counts.skippedTruncated++;
      continue;
    }
    let now = clock.monotonic();
    if (dueMono > now) {
      sinceYield = 0;
      const reached = await waitUntilDue(clock, dueMono, stopped);
      if (reached === undefined) return;
      now = reached;
    } else if (++sinceYield >= 16) {
      // Behind schedule: still let responses in, or the backlog only grows.
      sinceYield = 0;
      await yieldToEventLoop();
      now = clock.monotonic();
    }
    // Bounded in time as well as by the schedule: a loop far behind schedule ends with the window.
    if (now >= endMono) return;
    progress(now);
    index++;
    const lag = Math.max(0, now - dueMono);
    counts.maxLag = Math.max(counts.maxLag, lag);
    counts.lagSum += lag;
    if (
      senders.inflight.control >= options.concurrency * senders.processes.control ||
      senders.inflight.treatment >= options.concurrency * senders.processes.treatment
    ) {
      // At the cap: this pair is dropped, and so is every pair that falls due while waiting
      // for a slot — counted, not sent late, and without spinning through the corpus.
      counts.droppedPairs++;
      carried = record; // a dropped pair consumes no record: it goes with the next pair sent
      await senders.slotFreed();
      // The cap comes from the configured window, not from endMono - startMono, whose float rounding could admit one pair too many.
      const caughtUp = Math.min(Math.floor(((clock.monotonic() - startMono) * options.ratePerSecond) / 1000), windowPairs);
      if (caughtUp > index) {
        counts.droppedPairs += caughtUp - index;
        index = caughtUp;
      }
      continue;
    }
    const inWarmup = phaseOf(dueMono, startMono, options.warmupMs) === 'warmup';
    if (!measureStarted && !inWarmup) {
      measureStarted = true;
      options.onMeasureStart?.();
    }
    const headers = headersFor(record);
    const body = record.body === '' ? null : Buffer.from(record.body, 'base64');
    const first = nextFirst();
    counts.firstSide[first]++;
    const second: ArmName = first === 'control' ? 'treatment' : 'control';
    // Process i of each arm in turn, the first side first: the arms' i-th processes form lane i.
    for (let process = 0; process < Math.max(senders.processes.control, senders.processes.treatment); process++) {
      if (process < senders.processes[first]) senders.send(first, record, headers[first], body, dueMono, true, process);
      if (process < senders.processes[second]) senders.send(second, record, headers[second], body, dueMono, false, process);
    }
    if (senders.hasControlPrime) {
      if (senders.inflight['control-prime'] < options.concurrency) senders.send('control-prime', record, headers['control-prime'], body, dueMono, false);
      else counts.controlPrimeSkipped++;
    }
    counts.sentPairs++;
    if (inWarmup) counts.warmupPairs++;
  }
}

/** A progress report at most every `progressIntervalMs`: phase, pairs, drops, in-flight, errors and the recent rate. */
function progressReporter(
  options: PairedReplayOptions,
  senders: ArmSenders,
  counts: ScheduleCounts,
  startMono: number,
  endMono: number,
): (nowMono: number) => void {
  const interval = options.progressIntervalMs ?? 1_000;
  let last = { at: startMono, pairs: 0 };
  return (nowMono) => {
    if (!options.onProgress || nowMono - last.at < interval) return;
    const elapsed = nowMono - startMono;
    const rate = ((counts.sentPairs - last.pairs) * 1000) / Math.max(1, nowMono - last.at);
    const inflight = { control: senders.inflight.control, treatment: senders.inflight.treatment };
    const errors = { control: senders.errorTotal('control'), treatment: senders.errorTotal('treatment') };
    options.onProgress({
      phase: elapsed < options.warmupMs ? 'warmup' : 'measure',
      elapsedMs: elapsed,
      remainingMs: Math.max(0, endMono - nowMono),
      sentPairs: counts.sentPairs,
      droppedPairs: counts.droppedPairs,
      inflight,
      errors,
      rate,
    });
    last = { at: nowMono, pairs: counts.sentPairs };
  };
}
