/**
 * Ranking: scores a candidate set. It fetches features from the feature
 * service, crosses them with each multi-query variant (its own CPU work),
 * and sends one model-evaluation batch per variant through the inference
 * gateway (HTTP, or KServe v2 gRPC with INFERENCE_PROTOCOL=grpc). Dependencies are reached through base URLs
 * (env FEATURES_URL and INFERENCE_URL when run as a process), so a deployment can point them at
 * Tandem's router.
 */
import { Gauge } from 'prom-client';
import type { Clock } from '../../core/clock.js';
import { CATALOG_SIZE, CROSS_ROUNDS, FEATURES, MULTI_QUERY_WEIGHTS, burnRows, crossFeatureRows, hashString, queryVector } from './model.js';
import { RANKING_LEVELS } from './levels.js';
import { DEADLINE_HEADER, HttpError, ServiceHost, type ServiceRequest } from './service-host.js';
import { JsonClient } from './json-client.js';
import { inferenceClient, type InferenceProtocol } from './inference-client.js';
import { WorkerPool, type Worker } from './worker-pool.js';
import type { StackFaults } from './faults.js';

export interface RankingServiceOptions {
  readonly featuresUrl: string;
  readonly inferenceUrl: string;
  /** How prediction is called: HTTP `POST /infer`, or KServe v2 gRPC `ModelInfer`. @default 'http' */
  readonly inferenceProtocol?: InferenceProtocol;
  readonly faults?: StackFaults;
  readonly port?: number;
  readonly clock?: Clock;
  /** @default 2 */
  readonly workers?: number;
  /** Deadline of one request unless the caller sends a shorter `x-deadline-ms`. @default 2000 */
  readonly deadlineMs?: number;
  /** @default 250 */
  readonly restartDelayMs?: number;
  /** Rounds of feature crossing per document and variant (model.ts): the service's own CPU per request. @default CROSS_ROUNDS */
  readonly crossRounds?: number;
}

export interface RankRequest {
  surface: string;
  viewer: number;
  query: string;
  candidates: number[];
  k: number;
}

export interface RankedItem {
  readonly id: number;
  readonly score: number;
}

/** The model config each surface uses. */
export function modelFor(surface: string): string {
  return `rank-${surface}`;
}

function parseRankRequest(body: unknown): RankRequest {
  const b = body as Partial<RankRequest> | undefined;
  if (typeof b?.surface !== 'string' || !/^[a-z]{1,32}$/.test(b.surface)) throw new HttpError(400, 'surface must be a lower-case word');
  if (!Number.isInteger(b.viewer)) throw new HttpError(400, 'viewer must be an integer');
  if (typeof b.query !== 'string' || b.query.length > 512) throw new HttpError(400, 'query must be a string of at most 512 characters');
  if (
    !Array.isArray(b.candidates) ||
    b.candidates.length === 0 ||
    b.candidates.length > 2_000 ||
    !b.candidates.every((c) => Number.isInteger(c) && c >= 0 && c < CATALOG_SIZE)
  ) {
    throw new HttpError(400, 'candidates must be 1 to 2000 document ids');
  }
  const k = b.k ?? 10;
  if (!Number.isInteger(k) || k < 1 || k > 1_000) throw new HttpError(400, 'k must be an integer in [1, 1000]');
  return { surface: b.surface, viewer: b.viewer as number, query: b.query, candidates: b.candidates, k };
}

export function createRankingService(options: RankingServiceOptions): ServiceHost {
  const host = new ServiceHost({ name: 'ranking', port: options.port, clock: options.clock, maxLevel: RANKING_LEVELS.length - 1 });
  const client = new JsonClient();
  const inference = inferenceClient(options.inferenceUrl, options.inferenceProtocol);
  const crossRounds = options.crossRounds ?? CROSS_ROUNDS;
  // Work per scored candidate row (document × multi-query variant): the same for every request of a
  // build, whatever the request mix, so a change in the cost of scoring shows exactly (FLOPs per candidate).
  let scoredRows = 0;
  let scoringWork = 0;
  new Gauge({
    name: 'work_units_per_candidate',
    help: 'Work units per scored candidate row (document x multi-query variant) since start: the cost model of scoring.',
    registers: [host.registry],
    collect() {
      this.set(scoredRows > 0 ? scoringWork / scoredRows : 0);
    },
  });
  const faults = options.faults ?? {};
  const pool = new WorkerPool({
    service: 'ranking',
    size: options.workers ?? 2,
    clock: host.clock,
    restartDelayMs: options.restartDelayMs ?? 250,
    onCrash: () => host.metrics.restarts.inc(),
  });

  /** Fetch features, honouring the deadline; the latent-timeout fault mishandles the timeout path. */
  async function fetchFeatures(request: ServiceRequest, rank: RankRequest, ids: number[], worker: Worker): Promise<number[][]> {
    const requested = Number(request.headers[DEADLINE_HEADER]);
    const deadlineMs = Number.isFinite(requested) && requested > 0 ? Math.min(requested, options.deadlineMs ?? 2_000) : (options.deadlineMs ?? 2_000);
    const cancel = new AbortController();
    const onClientGone = (): void => cancel.abort(request.signal.reason);
    request.signal.addEventListener('abort', onClientGone, { once: true });
    // Request-scoped state the feature task reads when it completes.
    const state = { live: true };
    const task = client
      .post<{ features: number[][] }>(
        `${options.featuresUrl}/features`,
        { viewer: rank.viewer, ids },
        {
          headers: request.forwardHeaders,
          // The fault's defect: the task is not tied to the request's cancellation.
          ...(faults.latentTimeout ? {} : { signal: cancel.signal }),
        },
      )
      .then((response) => {
        if (!state.live) {
          // FIRE §3.1: the task outlived the request and dereferences torn-down state.
          worker.crash('feature extraction completed after its request timed out and touched freed request state');
          return [];
        }
        // One row of FEATURES numbers per requested id, or the crossing below would read or write out of place.
        const rows = response.features;
        if (
          !Array.isArray(rows) ||
          rows.length !== ids.length ||
          !rows.every((row) => Array.isArray(row) && row.length === FEATURES && row.every((v) => typeof v === 'number'))
        ) {
          throw new HttpError(
            502,
            `features answered ${Array.isArray(rows) ? `${rows.length} rows` : 'no rows'} for ${ids.length} ids, or rows that are not ${FEATURES} numbers`,
          );
        }
        return rows;
      });
    const timer = new AbortController();
    const timeout = host.clock.sleep(deadlineMs, timer.signal).then(
      () => 'timeout' as const,
      () => 'cleared' as const,
    );
    try {
      const winner = await Promise.race([task, timeout]);
      if (winner === 'timeout') {
        state.live = false;
        if (!faults.latentTimeout) cancel.abort(new Error('deadline exceeded'));
        task.catch(() => undefined);
        throw new HttpError(504, `deadline of ${deadlineMs} ms exceeded while fetching features`);
      }
      return winner as number[][];
    } finally {
      timer.abort();
      request.signal.removeEventListener('abort', onClientGone);
    }
  }

  host.route('POST /rank', async (request) => {
    const rank = parseRankRequest(request.body);
    if (faults.errorRate !== undefined && hashString(JSON.stringify(request.body)) / 4_294_967_296 < faults.errorRate) {
      throw new HttpError(500, 'injected error (error-rate fault)');
    }
    const level = host.levelFor(request);
    const { multiQueries, docsShare } = RANKING_LEVELS[level]!;
    return pool.run(async (worker) => {
      const scored = rank.candidates.slice(0, Math.max(1, Math.ceil(rank.candidates.length * docsShare)));
      const features = await fetchFeatures(request, rank, scored, worker);
      const model = modelFor(rank.surface);
      const variants = MULTI_QUERY_WEIGHTS.slice(0, multiQueries);
      // One batch for all variants, rows variant-major: row = variant * docs + doc.
      const rows = scored.length * variants.length;
      const input = new Float32Array(rows * FEATURES);
      // One crossing per variant, into the model input; the latency fault adds its share of the rows as one more,
      // into a discarded buffer, through the same call: a faulty build does more of the same work, never other code.
      // (From a call of its own with other arguments, the +5% step measured anywhere from −3% to +10% per trial on a
      // noisy host, where the clean change's trials stayed within ±3%.)
      const crossings: { rows: readonly (readonly number[])[]; variant: number; out: Float32Array; offset: number }[] = variants.map((_, variant) => ({
        rows: features,
        variant,
        out: input,
        offset: variant * scored.length * FEATURES,
      }));
      const extraRows = faults.latencyPercent && scored.length > 0 ? Math.round((rows * faults.latencyPercent) / 100) : 0;
      if (extraRows > 0) crossings.push({ rows: burnRows(features, extraRows), variant: 0, out: new Float32Array(extraRows * FEATURES), offset: 0 });
      host.compute(() => {
        let work = 0;
        for (const crossing of crossings)
          work += crossFeatureRows(crossing.rows, queryVector(rank.surface, rank.query, crossing.variant), crossing.out, crossing.offset, crossRounds);
        host.metrics.work.inc(work);
        scoredRows += rows;
        scoringWork += work;
      });
      // FIRE §3.2: a per-candidate feature treated as request-level state collapses the batch dimension.
      const collapse = faults.malformedTensorModel === model;
      const result = await inference.infer({
        model,
        batch: rows,
        shape: [collapse ? 1 : rows, FEATURES],
        values: collapse ? input.subarray(0, FEATURES) : input,
        headers: request.forwardHeaders,
        signal: request.signal,
      });
      const weightSum = variants.reduce((sum, w) => sum + w, 0);
      const scores = new Map<number, number>();
      scored.forEach((doc, row) => {
        const combined = variants.reduce((sum, weight, variant) => sum + weight * result.scores[variant * scored.length + row]!, 0);
        scores.set(doc, Math.round((combined / weightSum) * 1e9) / 1e9);
      });
      // Documents not scored at this level keep their prior order, after every scored one.
      rank.candidates.forEach((doc, i) => {
        if (!scores.has(doc)) scores.set(doc, -10 - i / rank.candidates.length);
      });
      const items: RankedItem[] = [...scores.entries()]
        .sort((a, b) => b[1] - a[1] || a[0] - b[0])
        .slice(0, rank.k)
        .map(([id, score]) => ({ id, score }));
      return { body: { items, level, predictionLevel: result.level } };
    });
  });

  host.onClose(() => pool.close());
  host.onClose(() => client.close());
  host.onClose(() => inference.close());
  return host;
}
