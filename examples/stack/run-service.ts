/**
 * Starts one example service (or the whole prediction tier) in this process.
 * The configuration comes as a typed object (in-process stacks) or from the
 * environment the way a deployment gets it (child processes and
 * `tandem example-stack --service NAME`): dependency base URLs, faults, sizes.
 */
import type { Clock } from '../../core/clock.js';
import type { DependencyErrorRecord } from '../../core/model.js';
import { InputError } from '../../core/errors.js'; // leaf import: see faults.ts
import { createFeaturesService } from './features-service.js';
import { createGatewayService } from './gateway-service.js';
import { createPredictionShard, type PredictionShard } from './prediction-service.js';
import { createRankingService } from './ranking-service.js';
import { createQueryService } from './query-service.js';
import { parseFaults, type StackFaults } from './faults.js';
import { startPredictionGrpc } from './prediction-grpc.js';
import { MAX_CROSS_ROUNDS } from './model.js';
import type { InferenceProtocol } from './inference-client.js';

export type StackService = 'query' | 'ranking' | 'features' | 'gateway' | 'prediction';
export const STACK_SERVICES: readonly StackService[] = ['query', 'ranking', 'features', 'gateway', 'prediction'];

export interface ServiceConfig {
  /** Port of the service (of the first shard for `prediction`); 0 picks a free one. */
  readonly port?: number;
  readonly featuresUrl?: string;
  readonly inferenceUrl?: string;
  readonly rankingUrl?: string;
  readonly shardUrls?: readonly string[];
  readonly faults?: StackFaults;
  /** Prediction shards. @default 4 */
  readonly shards?: number;
  /** Workers per ranking instance or prediction shard. @default 2 */
  readonly workers?: number;
  /** @default 250 */
  readonly restartDelayMs?: number;
  readonly clock?: Clock;
  readonly onErrorRecord?: (record: DependencyErrorRecord) => void;
  /** A lattice controller to coordinate with (ranking and prediction report load-factors and take assigned levels). */
  readonly latticeUrl?: string;
  /** @default 1000 */
  readonly latticePollMs?: number;
  /** The feature service's throughput limit in documents per second (none when absent). */
  readonly featuresDocsPerSecond?: number;
  /** How ranking calls prediction (env INFERENCE_PROTOCOL). @default 'http' */
  readonly inferenceProtocol?: InferenceProtocol;
  /** Ranking's rounds of feature crossing per document and variant (env STACK_CROSS_ROUNDS, 1 to MAX_CROSS_ROUNDS). @default CROSS_ROUNDS */
  readonly crossRounds?: number;
  /** Ranking's deadline for its features call, in process only (tests of other parts move it out of the way). @default 2000 */
  readonly deadlineMs?: number;
}

export interface RunningService {
  readonly urls: readonly string[];
  /** Prediction shards' KServe v2 gRPC addresses, in shard order. */
  readonly grpcUrls?: readonly string[];
  /** In-process prediction shards, for inspection. */
  readonly shards?: readonly PredictionShard[];
  close(): Promise<void>;
}

function required(value: string | undefined, name: string, service: string): string {
  if (!value) throw new InputError(`the ${service} service needs ${name} (the base URL of its dependency)`);
  return value;
}

function integer(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const text = env[name];
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new InputError(`${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
  return value;
}

/** The configuration a deployment passes through environment variables. */
export function serviceConfigFromEnv(env: NodeJS.ProcessEnv): ServiceConfig {
  const optional = <T>(value: T | undefined): T | undefined => value;
  return Object.fromEntries(
    Object.entries({
      port: integer(env, 'PORT'),
      featuresUrl: optional(env.FEATURES_URL),
      inferenceUrl: optional(env.INFERENCE_URL),
      inferenceProtocol: protocol(env.INFERENCE_PROTOCOL),
      rankingUrl: optional(env.RANKING_URL),
      latticeUrl: optional(env.LATTICE_URL),
      latticePollMs: integer(env, 'LATTICE_POLL_MS'),
      featuresDocsPerSecond: positive(integer(env, 'FEATURES_DOCS_PER_SECOND'), 'FEATURES_DOCS_PER_SECOND'),
      shardUrls: env.PREDICTION_SHARDS?.split(',').filter((u) => u !== ''),
      faults: parseFaults(env.STACK_FAULTS),
      shards: integer(env, 'STACK_SHARDS'),
      workers: integer(env, 'STACK_WORKERS'),
      restartDelayMs: integer(env, 'STACK_RESTART_DELAY_MS'),
      crossRounds: crossRounds(integer(env, 'STACK_CROSS_ROUNDS')),
    }).filter(([, v]) => v !== undefined),
  ) as ServiceConfig;
}

/** What a service's entry takes on its command line: the service, and its faults (`--faults=LIST`, as a deploy command's `{revision}`). */
export interface ServiceArguments {
  readonly service: StackService;
  readonly faults?: StackFaults;
}

/** `<service> [--faults=LIST | --faults LIST]`; anything else is an InputError naming it. */
export function serviceArguments(argv: readonly string[]): ServiceArguments {
  const [service, ...rest] = argv;
  if (service === undefined || !STACK_SERVICES.includes(service as StackService))
    throw new InputError(`the first argument must be one of ${STACK_SERVICES.join(', ')}, got ${JSON.stringify((service ?? '').slice(0, 40))}`);
  let faults: StackFaults | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const value = arg.startsWith('--faults=') ? arg.slice('--faults='.length) : arg === '--faults' ? rest[++i] : undefined;
    if (value === undefined)
      throw new InputError(
        arg === '--faults'
          ? '--faults needs a list of faults (an empty value means none)'
          : `unknown argument ${JSON.stringify(arg.slice(0, 40))} (only --faults=LIST)`,
      );
    if (faults !== undefined) throw new InputError('--faults is given twice');
    faults = parseFaults(value);
  }
  return { service: service as StackService, ...(faults !== undefined ? { faults } : {}) };
}

function protocol(text: string | undefined): InferenceProtocol | undefined {
  if (text === undefined || text === '') return undefined;
  if (text !== 'http' && text !== 'grpc') throw new InputError(`INFERENCE_PROTOCOL must be http or grpc, got ${JSON.stringify(text.slice(0, 20))}`);
  return text;
}

function crossRounds(value: number | undefined): number | undefined {
  if (value !== undefined && (value < 1 || value > MAX_CROSS_ROUNDS))
    throw new InputError(`STACK_CROSS_ROUNDS must be 1 to ${MAX_CROSS_ROUNDS} rounds of feature crossing, got ${value}`);
  return value;
}

function positive(value: number | undefined, name: string): number | undefined {
  if (value === 0) throw new InputError(`${name} must be a positive number of documents per second (unset for no limit), got 0`);
  return value;
}

export async function startService(service: string, config: ServiceConfig): Promise<RunningService> {
  const { port = 0, clock, restartDelayMs = 250 } = config;
  const workers = Math.max(1, config.workers ?? 2);
  if (service === 'prediction') {
    const shards = Array.from({ length: Math.max(1, config.shards ?? 4) }, (_, i) =>
      createPredictionShard({
        shard: `shard-${i}`,
        workers,
        restartDelayMs,
        port: i === 0 ? port : 0,
        ...(clock ? { clock } : {}),
        ...(config.onErrorRecord ? { onErrorRecord: config.onErrorRecord } : {}),
      }),
    );
    const urls = await Promise.all(shards.map((s) => s.host.listen()));
    // Each shard also speaks the KServe v2 inference protocol over gRPC, on a port of its own.
    const grpcServers = await Promise.all(shards.map((s) => startPredictionGrpc(s)));
    if (config.latticeUrl) for (const s of shards) s.host.coordinate(config.latticeUrl, { pollIntervalMs: config.latticePollMs ?? 1_000 });
    return {
      urls,
      grpcUrls: grpcServers.map((g) => g.url),
      shards,
      close: async () => {
        await Promise.all(grpcServers.map((g) => g.close()));
        await Promise.all(shards.map((s) => s.host.close()));
      },
    };
  }
  const common = { port, ...(clock ? { clock } : {}) };
  let host;
  switch (service) {
    case 'features':
      host = createFeaturesService({ ...common, ...(config.featuresDocsPerSecond ? { docsPerSecond: config.featuresDocsPerSecond } : {}) });
      break;
    case 'gateway':
      host = createGatewayService({ ...common, shardUrls: config.shardUrls ?? [] });
      break;
    case 'ranking':
      host = createRankingService({
        ...common,
        featuresUrl: required(config.featuresUrl, 'FEATURES_URL', service),
        inferenceUrl: required(config.inferenceUrl, 'INFERENCE_URL', service),
        ...(config.inferenceProtocol ? { inferenceProtocol: config.inferenceProtocol } : {}),
        ...(config.deadlineMs !== undefined ? { deadlineMs: config.deadlineMs } : {}),
        workers,
        restartDelayMs,
        ...(config.faults ? { faults: config.faults } : {}),
        ...(config.crossRounds !== undefined ? { crossRounds: config.crossRounds } : {}),
      });
      break;
    case 'query':
      host = createQueryService({ ...common, rankingUrl: required(config.rankingUrl, 'RANKING_URL', service) });
      break;
    default:
      throw new InputError(`unknown example service "${service}" (one of ${STACK_SERVICES.join(', ')})`);
  }
  const url = await host.listen();
  // Ranking takes levels; features has none but reports its load-factor (HiLO: a service that cannot
  // degrade itself is relieved by its callers degrading).
  if (config.latticeUrl && (service === 'ranking' || service === 'features'))
    host.coordinate(config.latticeUrl, { pollIntervalMs: config.latticePollMs ?? 1_000 });
  return { urls: [url], close: () => host.close() };
}
