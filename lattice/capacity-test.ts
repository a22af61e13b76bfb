/**
 * Capacity test (HiLO §4): replay the corpus into the SUT at its baseline
 * rate, ramp to a multiple of it, hold, and fall back to the baseline for a
 * cooldown, open loop, while the lattice controller does its job. Every
 * bucket records traffic, errors, the no-result rate, quality (NDCG@k of each
 * ranked list against the same request's L0 answer, taken in a reference
 * pass before the ramp; a failed request shows the user nothing and counts 0), stability (share of requests answered exactly as the
 * last time the same request was seen within the stability window, as HiLO
 * defines it) and, when a controller is given, its state and product
 * load-factor. The summary gives active degradation time against overload
 * duration and HiLO's recovery times. Bounded in time and in-flight count.
 */
import { hash } from 'node:crypto';
import { Pool, request } from 'undici';
import type { Clock, CorpusRecord } from '../core/index.js';
import { ndcgAtK } from '../harness/index.js';
import { InputError } from '../core/index.js';

export interface CapacityProfile {
  /** Requests per second at 1× (the baseline peak). */
  readonly baselineRate: number;
  /** Multiple of the baseline reached at the top of the ramp, e.g. 2. */
  readonly peak: number;
  /** Time at the baseline before the ramp (the quality and stability baseline). */
  readonly leadMs: number;
  readonly rampMs: number;
  readonly holdMs: number;
  /** Time back at the baseline after the hold, to watch recovery. */
  readonly cooldownMs: number;
}

/** The target rate at `elapsedMs` into the test. */
export function rateAt(profile: CapacityProfile, elapsedMs: number): number {
  const { baselineRate: base, peak, leadMs, rampMs, holdMs } = profile;
  if (elapsedMs < leadMs) return base;
  if (elapsedMs < leadMs + rampMs) return base * (1 + ((peak - 1) * (elapsedMs - leadMs)) / rampMs);
  if (elapsedMs < leadMs + rampMs + holdMs) return base * peak;
  return base;
}

export interface CapacityBucket {
  readonly startMs: number;
  readonly targetRate: number;
  readonly sent: number;
  readonly dropped: number;
  readonly errors: number;
  /** Share of requests that gave the user no results: failed (5xx, timeout, connection) or an empty ranked list. */
  readonly noResultShare: number;
  /** Mean NDCG@k against the L0 reference answers, failed requests counting 0 (NaN without any). */
  readonly quality: number;
  /** Share of requests answered identically to their previous answer within the stability window. */
  readonly stability: number;
  readonly state?: string;
  readonly productLoadFactor?: number | null;
}

export interface CapacitySummary {
  readonly peakRateReached: number;
  readonly maxState?: string;
  readonly finalState?: string;
  readonly overloadDurationMs: number;
  /** Time the controller held a degraded state (L1 or higher). */
  readonly activeDegradationMs: number;
  readonly baselineQuality: number;
  /** Largest drop of the rolling quality below the baseline. */
  readonly maxQualityLoss: number;
  readonly maxNoResultShare: number;
  readonly meanNoResultShare: number;
  /** From the end of the overload to the rolling quality being back within 0.05 of the baseline (HiLO); undefined when it never was. */
  readonly qualityRecoveryMs?: number;
  /** From the end of the overload to the rolling stability reaching 90% (HiLO); undefined when it never did. */
  readonly stabilityRecoveryMs?: number;
}

export interface CapacityTestOptions {
  readonly url: string;
  readonly records: readonly CorpusRecord[];
  readonly profile: CapacityProfile;
  readonly ranking: { readonly path: string; readonly id?: string | undefined; readonly k: number };
  readonly clock: Clock;
  /** @default 1000 */
  readonly bucketMs?: number;
  /** Buckets a request's previous answer is remembered for stability. @default 10 */
  readonly stabilityBuckets?: number;
  /** Buckets of the rolling averages used for recovery (HiLO: 5 minutes). @default 5 */
  readonly rollingBuckets?: number;
  readonly controllerUrl?: string;
  /** Lattice state names in order, to tell degraded states from L0. */
  readonly states?: readonly string[];
  /** @default 256 */
  readonly concurrency?: number;
  /** @default 5000 */
  readonly timeoutMs?: number;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Every distinct request's ranked ids at L0, taken before the test with its headers and nothing else loading the
   * service (a probe at the baseline rate can: examples/stack/capacity-scenario.ts). Given, the test does not take
   * its own reference pass; a request it has none for is not scored for quality.
   */
  readonly reference?: ReadonlyMap<string, readonly string[]>;
  readonly signal?: AbortSignal;
}

/** The ranked ids of an answer's body at `ranking.path` (each entry's `ranking.id`), or undefined when it has none. */
export function rankedIds(body: string, ranking: CapacityTestOptions['ranking']): string[] | undefined {
  try {
    let value: unknown = JSON.parse(body);
    for (const key of ranking.path.split('.')) value = (value as Record<string, unknown> | null)?.[key];
    if (!Array.isArray(value)) return undefined;
    return value.map((entry) => {
      const id = ranking.id !== undefined && entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>)[ranking.id] : entry;
      return typeof id === 'string' ? id : JSON.stringify(id);
    });
  } catch {
    return undefined;
  }
}

const mean = (values: readonly number[]): number => {
  const finite = values.filter(Number.isFinite);
  return finite.length === 0 ? Number.NaN : finite.reduce((a, b) => a + b, 0) / finite.length;
};

/** A profile the load loop can follow: a NaN rate or duration would run a test of nothing and report it (bench capacity once did). */
function checkedProfile(profile: CapacityProfile): CapacityProfile {
  for (const field of ['baselineRate', 'peak', 'leadMs', 'rampMs', 'holdMs', 'cooldownMs'] as const) {
    const value = profile[field];
    const positive = field === 'baselineRate' || field === 'peak';
    if (typeof value !== 'number' || !Number.isFinite(value) || (positive ? value <= 0 : value < 0)) {
      throw new InputError(`capacity profile: ${field} must be a finite number ${positive ? 'above 0' : 'of 0 or more'}, got ${String(value)}`);
    }
  }
  return profile;
}

export async function runCapacityTest(options: CapacityTestOptions): Promise<{ buckets: CapacityBucket[]; summary: CapacitySummary }> {
  const { clock } = options;
  const profile = checkedProfile(options.profile);
  const bucketMs = options.bucketMs ?? 1_000;
  const records = options.records.filter((r) => !r.bodyTruncated);
  if (records.length === 0) throw new InputError('the capacity test needs recorded requests with bodies');
  const concurrency = options.concurrency ?? 256;
  const pool = new Pool(options.url, { connections: concurrency, headersTimeout: options.timeoutMs ?? 5_000, bodyTimeout: options.timeoutMs ?? 5_000 });
  const send = async (record: CorpusRecord): Promise<{ status: number; body: string } | undefined> => {
    try {
      const response = await pool.request({
        method: record.method as 'POST',
        path: record.path,
        headers: {
          ...Object.fromEntries(Object.entries(record.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name))),
          ...options.headers,
        },
        body: record.body === '' ? null : Buffer.from(record.body, 'base64'),
      });
      return { status: response.statusCode, body: await response.body.text() };
    } catch {
      return undefined;
    }
  };
  try {
    const reference = options.reference ?? (await referencePass(records, send, options));

    const total = profile.leadMs + profile.rampMs + profile.holdMs + profile.cooldownMs;
    const bucketCount = Math.ceil(total / bucketMs);
    const acc = Array.from({ length: bucketCount }, (): BucketTally => ({
      sent: 0,
      dropped: 0,
      answered: 0,
      errors: 0,
      empty: 0,
      ndcg: [],
      compared: 0,
      identical: 0,
    }));
    const lastAnswer = new Map<string, { hash: string; bucket: number }>();
    const controllerSamples: { state?: string; productLoadFactor?: number | null }[] = new Array(bucketCount).fill(undefined).map(() => ({}));
    const start = clock.monotonic();
    let inflight = 0;
    let next = 0;
    const pending = new Set<Promise<void>>();
    let sampledBucket = -1;
    const sampleController = async (bucket: number): Promise<void> => {
      if (options.controllerUrl) controllerSamples[bucket] = await controllerSample(options.controllerUrl);
    };
    let sinceYield = 0;
    for (let dueMs = 0; dueMs < total && !options.signal?.aborted;) {
      const now = clock.monotonic() - start;
      if (now >= total) break; // bounded in time even when far behind schedule
      if (dueMs <= now && ++sinceYield >= 16) {
        // Behind schedule: let responses in, or the backlog only grows.
        sinceYield = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (dueMs > now) {
        await clock.sleep(Math.max(0, Math.floor(dueMs - now)), options.signal).catch(() => undefined);
        continue;
      }
      const bucket = Math.min(bucketCount - 1, Math.floor(dueMs / bucketMs));
      if (bucket !== sampledBucket) {
        sampledBucket = bucket;
        const sampling = sampleController(bucket);
        pending.add(sampling);
        void sampling.finally(() => pending.delete(sampling));
      }
      const record = records[next++ % records.length]!;
      dueMs += 1000 / rateAt(profile, dueMs);
      if (inflight >= concurrency) {
        acc[bucket]!.dropped++;
        continue;
      }
      acc[bucket]!.sent++;
      inflight++;
      const work = send(record).then((answer) => {
        inflight--;
        tallyAnswer(acc[bucket]!, bucket, record.id, answer, {
          reference,
          lastAnswer,
          ranking: options.ranking,
          stabilityBuckets: options.stabilityBuckets ?? 10,
        });
      });
      pending.add(work);
      void work.finally(() => pending.delete(work));
    }
    await Promise.all([...pending]);

    const buckets: CapacityBucket[] = acc.map((a, i) => ({
      startMs: i * bucketMs,
      targetRate: rateAt(profile, i * bucketMs),
      sent: a.sent,
      dropped: a.dropped,
      errors: a.errors,
      noResultShare: a.answered + a.errors > 0 ? (a.empty + a.errors) / (a.answered + a.errors) : 0,
      quality: mean(a.ndcg),
      stability: a.compared > 0 ? a.identical / a.compared : Number.NaN,
      ...controllerSamples[i],
    }));
    return { buckets, summary: summarize(buckets, options, bucketMs) };
  } finally {
    await pool.destroy();
  }
}

interface BucketTally {
  sent: number;
  dropped: number;
  answered: number;
  errors: number;
  empty: number;
  readonly ndcg: number[];
  compared: number;
  identical: number;
}

type Answer = { status: number; body: string } | undefined;

/**
 * Reference pass: every distinct request's answer at L0, before any load, paced at the baseline rate so
 * the pass itself does not push the service into a degraded state.
 */
async function referencePass(
  records: readonly CorpusRecord[],
  send: (record: CorpusRecord) => Promise<Answer>,
  options: CapacityTestOptions,
): Promise<Map<string, string[]>> {
  const reference = new Map<string, string[]>();
  const distinct = records.slice(0, 2_000);
  for (let i = 0; i < distinct.length && !options.signal?.aborted; i += 8) {
    if (i > 0) await options.clock.sleep(Math.ceil((8 * 1000) / options.profile.baselineRate), options.signal).catch(() => undefined);
    await Promise.all(
      distinct.slice(i, i + 8).map(async (record) => {
        const answer = await send(record);
        const ids = answer && answer.status < 400 ? rankedIds(answer.body, options.ranking) : undefined;
        if (ids) reference.set(record.id, ids);
      }),
    );
  }
  return reference;
}

/** The controller's state and latest product load-factor, or nothing when it did not answer within 500 ms. */
async function controllerSample(controllerUrl: string): Promise<{ state?: string; productLoadFactor?: number | null }> {
  try {
    const levels = await request(`${controllerUrl}/levels`, { headersTimeout: 500, bodyTimeout: 500 });
    const { state } = (await levels.body.json()) as { state?: string };
    const decisions = await request(`${controllerUrl}/decisions`, { headersTimeout: 500, bodyTimeout: 500 });
    const list = (await decisions.body.json()) as { productLoadFactor?: number | null }[];
    return { ...(state ? { state } : {}), productLoadFactor: list.at(-1)?.productLoadFactor ?? null };
  } catch {
    return {};
  }
}

/** One answer counted in its bucket: errors, no-result, NDCG against the L0 reference, and stability. */
function tallyAnswer(
  a: BucketTally,
  bucket: number,
  recordId: string,
  answer: Answer,
  context: {
    reference: ReadonlyMap<string, readonly string[]>;
    lastAnswer: Map<string, { hash: string; bucket: number }>;
    ranking: CapacityTestOptions['ranking'];
    stabilityBuckets: number;
  },
): void {
  if (!answer || answer.status >= 500) {
    a.errors++;
    // The user saw no results: quality 0 for this request, as for an empty list.
    if (context.reference.has(recordId)) a.ndcg.push(0);
    return;
  }
  a.answered++;
  const ids = rankedIds(answer.body, context.ranking);
  if (!ids || ids.length === 0) a.empty++;
  const ref = context.reference.get(recordId);
  if (ids && ref) a.ndcg.push(ndcgAtK(ids, ref, context.ranking.k));
  const digest = hash('sha1', answer.body);
  const previous = context.lastAnswer.get(recordId);
  if (previous && bucket - previous.bucket <= context.stabilityBuckets) {
    a.compared++;
    if (previous.hash === digest) a.identical++;
  }
  context.lastAnswer.set(recordId, { hash: digest, bucket });
}

function summarize(buckets: readonly CapacityBucket[], options: CapacityTestOptions, bucketMs: number): CapacitySummary {
  const { profile } = options;
  const window = options.rollingBuckets ?? 5;
  const rolling = (values: readonly number[], i: number): number => mean(values.slice(Math.max(0, i - window + 1), i + 1));
  const quality = buckets.map((b) => b.quality);
  const stability = buckets.map((b) => b.stability);
  const leadBuckets = Math.max(1, Math.floor(profile.leadMs / bucketMs));
  const baselineQuality = mean(quality.slice(0, leadBuckets));
  const overloadEndMs = profile.leadMs + profile.rampMs + profile.holdMs;
  const firstAfter = buckets.findIndex((b) => b.startMs >= overloadEndMs);
  const recovery = (ok: (i: number) => boolean): number | undefined => {
    if (firstAfter === -1) return undefined;
    for (let i = firstAfter; i < buckets.length; i++) if (ok(i)) return buckets[i]!.startMs - overloadEndMs;
    return undefined;
  };
  const states = options.states ?? [];
  const stateIndex = (s: string | undefined): number => (s === undefined ? -1 : states.indexOf(s));
  const degraded = buckets.filter((b) => stateIndex(b.state) > 0).length;
  const maxIndex = Math.max(-1, ...buckets.map((b) => stateIndex(b.state)));
  const rollingQuality = quality.map((_, i) => rolling(quality, i));
  const losses = rollingQuality.map((q) => baselineQuality - q).filter(Number.isFinite);
  const qualityRecoveryMs = recovery((i) => rollingQuality[i]! >= baselineQuality - 0.05);
  const stabilityRecoveryMs = recovery((i) => rolling(stability, i) >= 0.9);
  const finalState = [...buckets].reverse().find((b) => b.state !== undefined)?.state;
  return {
    peakRateReached: Math.max(...buckets.map((b) => (b.sent * 1000) / bucketMs)),
    ...(maxIndex >= 0 ? { maxState: states[maxIndex]! } : {}),
    ...(finalState !== undefined ? { finalState } : {}),
    overloadDurationMs: profile.rampMs + profile.holdMs,
    activeDegradationMs: degraded * bucketMs,
    baselineQuality,
    maxQualityLoss: losses.length > 0 ? Math.max(0, ...losses) : Number.NaN,
    maxNoResultShare: Math.max(0, ...buckets.map((b) => b.noResultShare)),
    meanNoResultShare: mean(buckets.map((b) => b.noResultShare)),
    ...(qualityRecoveryMs !== undefined ? { qualityRecoveryMs } : {}),
    ...(stabilityRecoveryMs !== undefined ? { stabilityRecoveryMs } : {}),
  };
}
