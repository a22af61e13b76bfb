/**
 * The demo's "production": traffic through the example stack's query service while the recording sidecar in front
 * of ranking samples a corpus, until the corpus holds what a trial replays and the demo has read what a ranking
 * request costs here.
 */
import type { CorpusRecord, TandemConfig } from '../../core/index.js';
import { systemClock } from '../../core/index.js';
import type { Store } from '../../store/index.js';
import { Recorder, startSidecar } from '../../recorder/index.js';
import { generateTraffic, startService } from '../stack/index.js';
import { measureRequestCost, readRanking, sampleOf } from './request-cost.js';
import type { Progress } from './run-demo.js';

/** What a ranking request costs is read over the recording's seconds 2–4 (recordProduction says why). */
const READING_WARM_UP_MS = 2_000;
const READING_WINDOW_MS = 2_000;
/** The recording lasts at least its reading. */
export const READING_MS = READING_WARM_UP_MS + READING_WINDOW_MS;
/** Production requests a second through query → ranking while the demo records. */
export const PRODUCTION_TRAFFIC_RATE = 50;

/**
 * Production traffic through the query service while the sidecar in front of ranking records a sample: the corpus
 * size, and what a ranking request cost in CPU meanwhile (request-cost.ts; undefined when it could not be read).
 */
export async function recordProduction(
  ranking: { url: string; pid: number | undefined },
  store: Store,
  config: TandemConfig,
  trialRecords: number,
  progress: Progress,
  signal: AbortSignal | undefined,
  afterReading: () => void,
): Promise<{ corpusRecords: number; recordingMs: number; sample: CorpusRecord[]; cpuSecondsPerRequest: number | undefined }> {
  const recorder = new Recorder({
    tier: 'ranking',
    store: store.corpus,
    clock: systemClock,
    rate: config.recorder.rate,
    redact: config.recorder.redact,
    log: () => undefined,
  });
  const sidecar = await startSidecar({ recorder, upstream: ranking.url });
  const query = await startService('query', { rankingUrl: sidecar.url });
  // A trial replays rate × its seconds of records and the corpus does not wrap: the recording ends once the corpus
  // holds that many and the cost reading is taken, and no later. Every second recorded is a second of every run: it
  // recorded for a fixed time sized for a third more on average (6 s for the 100 a trial at 20 pairs/s replays) until
  // 2026-12-06, and 2 s more than that unless --quick before then. Bounded at twice the expected time, and at
  // twice the reading's at a rate low enough that the records come sooner.
  const trafficRate = PRODUCTION_TRAFFIC_RATE;
  const sampledPerSecond = trafficRate * config.recorder.rate;
  const maxRecordMs = Math.max(Math.ceil((trialRecords * 2) / sampledPerSecond) * 1_000, 2 * READING_MS);
  const recording = setInterval(
    () => progress(0, 'recording', `production traffic ${trafficRate} req/s through query → ranking; sampling ${config.recorder.rate * 100}% into the corpus`),
    1_000,
  );
  // Read over the recording's seconds 2–4: the stack's ranking process is fresh, and in its first seconds of traffic
  // a request costs more than it will (over seconds 1–3 four runs read 16.4–22.3 ms, three of them above what keeps
  // the rate, and a probe followed, 2.5 s; over seconds 2–4 the four after them read 12.7–14.0 ms; 2026-12-06).
  const pid = ranking.pid;
  const cost =
    pid === undefined
      ? Promise.resolve(undefined)
      : measureRequestCost({
          read: () => readRanking(ranking.url, pid),
          clock: systemClock,
          warmUpMs: READING_WARM_UP_MS,
          windowMs: READING_WINDOW_MS,
          ...(signal ? { signal } : {}),
        });
  // What may run beside the recording but not beside its reading (the judge's law), once the reading is taken.
  let read = false;
  const reading = cost
    .catch(() => undefined)
    .finally(() => {
      read = true;
      afterReading();
    });
  const held = (): boolean => {
    const { written, buffered } = recorder.accounting;
    return written + buffered >= trialRecords;
  };
  let traffic;
  try {
    traffic = await generateTraffic({
      url: query.urls[0]!,
      rate: trafficRate,
      maxRequests: Math.ceil((trafficRate * maxRecordMs) / 1000),
      maxDurationMs: maxRecordMs,
      enough: () => read && held(),
      ...(signal ? { signal } : {}),
    });
  } finally {
    clearInterval(recording);
    await query.close();
    await sidecar.close();
    await recorder.close();
  }
  const cpuSecondsPerRequest = await reading;
  // The demo's corpus is a few hundred records: read whole, and 50 of them across it kept for the probe.
  const corpus: CorpusRecord[] = [];
  for await (const record of store.corpus.read('ranking', { sinceMs: Date.now() - 3_600_000 })) corpus.push(record);
  const corpusRecords = corpus.length;
  const sample = sampleOf(corpus, 50);
  progress(0, 'recorded', `${traffic.sent} production requests (${traffic.failed} failed), ${corpusRecords} recorded for tier ranking`);
  return { corpusRecords, recordingMs: Math.round(traffic.durationMs), sample, cpuSecondsPerRequest };
}
