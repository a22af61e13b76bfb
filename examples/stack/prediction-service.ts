/**
 * One prediction shard: workers that evaluate a ranking model on a tensor
 * `[batch, features]`. Input that violates the model contract crashes the
 * worker that received it (FIRE §3.2: an accelerator assertion), which is
 * counted in `worker_restarts_total` and recorded as an error record carrying
 * the caller's identity; the shard's other workers keep answering.
 */
import type { Clock } from '../../core/clock.js';
import type { DependencyErrorRecord } from '../../core/model.js';
import { FEATURES, decodeTensor, scoreBatch } from './model.js';
import { PREDICTION_LEVELS } from './levels.js';
import { HttpError, ServiceHost, type ServiceRequest } from './service-host.js';
import { WorkerPool } from './worker-pool.js';

export interface PredictionShardOptions {
  readonly shard: string;
  readonly port?: number;
  readonly clock?: Clock;
  /** Workers per shard. @default 2 */
  readonly workers?: number;
  /** How long a crashed worker stays down. @default 250 */
  readonly restartDelayMs?: number;
  /** Also hand each error record to this sink (e.g. Tandem's ErrorRecordStore). */
  readonly onErrorRecord?: (record: DependencyErrorRecord) => void;
}

/** Error records kept in memory for `GET /errors`. */
const ERROR_RECORD_LIMIT = 10_000;

/** Body of `POST /infer`: a model name and a tensor `[batch, features]` as base64 float32. */
export interface InferRequest {
  model: string;
  batch: number;
  shape: unknown;
  data: string;
}

/** A decoded inference call, whatever protocol carried it. */
export interface InferCall {
  readonly model: string;
  readonly batch: number;
  readonly shape: unknown;
  readonly values: Float32Array | undefined;
}

/** What a shard answers: scores per row, and the level and layers they were computed at. */
export interface InferResult {
  readonly scores: number[];
  readonly level: number;
  readonly layers: number;
  readonly shard: string;
}

/** Why the tensor breaks the model contract, or undefined when it holds. */
function contractViolation(request: Pick<InferCall, 'batch' | 'shape'>, values: Float32Array | undefined): string | undefined {
  const { batch, shape } = request;
  if (!Array.isArray(shape) || shape.length !== 2) return `tensor shape ${JSON.stringify(shape)} is not [batch, features]`;
  if (shape[0] !== batch || shape[1] !== FEATURES) return `tensor shape [${shape.join(', ')}] violates the model contract [${batch}, ${FEATURES}]`;
  if (values === undefined || values.length !== batch * FEATURES) return `tensor has ${values?.length ?? 0} values, the contract needs ${batch * FEATURES}`;
  if (!values.every((v) => Number.isFinite(v))) return 'tensor has non-finite values';
  return undefined;
}

export interface PredictionShard {
  readonly host: ServiceHost;
  readonly pool: WorkerPool;
  readonly shard: string;
  /** One model evaluation on a worker: a contract violation crashes the worker and is recorded (HTTP `POST /infer` and gRPC `ModelInfer` both come here). */
  infer(request: ServiceRequest, call: InferCall): Promise<InferResult>;
  /** Error records in memory, oldest first. */
  errorRecords(): readonly DependencyErrorRecord[];
}

export function createPredictionShard(options: PredictionShardOptions): PredictionShard {
  const host = new ServiceHost({ name: 'prediction', shard: options.shard, port: options.port, clock: options.clock, maxLevel: PREDICTION_LEVELS.length - 1 });
  const records: DependencyErrorRecord[] = [];
  const record = (request: ServiceRequest, kind: string, message: string): void => {
    const entry: DependencyErrorRecord = {
      timeMs: host.clock.now(),
      dependency: 'prediction',
      shard: options.shard,
      kind,
      message,
      experimentId: request.identity.experiment,
      arm: request.identity.arm,
      trial: request.identity.trial,
      job: request.identity.job,
      jobs: request.identity.job === '' ? [] : [request.identity.job],
    };
    records.push(entry);
    if (records.length > ERROR_RECORD_LIMIT) records.shift();
    options.onErrorRecord?.(entry);
  };
  const pool = new WorkerPool({
    service: `prediction ${options.shard}`,
    size: options.workers ?? 2,
    clock: host.clock,
    restartDelayMs: options.restartDelayMs ?? 250,
    onCrash: () => host.metrics.restarts.inc(),
  });

  const infer = (request: ServiceRequest, call: InferCall): Promise<InferResult> => {
    if (!/^[a-z0-9-]{1,64}$/.test(call.model)) throw new HttpError(400, 'model must be a model name');
    if (!Number.isInteger(call.batch) || call.batch < 1 || call.batch > 16_384) throw new HttpError(400, 'batch must be an integer in [1, 16384]');
    const level = host.levelFor(request);
    const layers = PREDICTION_LEVELS[level]!.layers;
    return pool.run(async (worker) => {
      const violation = contractViolation(call, call.values);
      if (violation !== undefined) {
        record(request, 'contract-violation', `${call.model}: ${violation}`);
        worker.crash(violation);
        throw new HttpError(500, violation); // not reached: the crash already failed this task
      }
      const { scores, work } = host.compute(() => scoreBatch(call.model, call.values!, call.batch, layers));
      host.metrics.work.inc(work);
      return { scores, level, layers, shard: options.shard };
    });
  };

  host.route('POST /infer', async (request) => {
    const body = request.body as Partial<InferRequest> | undefined;
    if (typeof body?.model !== 'string') throw new HttpError(400, 'model must be a model name');
    if (typeof body.data !== 'string') throw new HttpError(400, 'data must be a base64 float32 tensor');
    return { body: await infer(request, { model: body.model, batch: body.batch as number, shape: body.shape, values: decodeTensor(body.data) }) };
  });

  host.route('GET /errors', async (request) => {
    const since = Number(request.query.get('since') ?? 0);
    const experiment = request.query.get('experiment');
    const jobs = request.query.getAll('job');
    const matching = records.filter(
      (r) =>
        r.timeMs >= since &&
        (experiment === null || r.experimentId === experiment) &&
        (jobs.length === 0 || jobs.includes(r.job) || r.jobs.some((j) => jobs.includes(j))),
    );
    return { body: { records: matching } };
  });

  host.onClose(() => pool.close());
  return { host, pool, shard: options.shard, infer, errorRecords: () => records };
}
