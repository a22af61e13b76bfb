/**
 * The demo's project: a tandem.config.yaml written for the example stack the
 * demo started (its URLs are only known then), on the embedded default or on
 * ClickHouse and BullMQ. One workload, `ranking`, deployed per trial from
 * `tandem example-stack --service ranking`, whose revision is the set of
 * faults the build carries (`latency=40`, `malformed-tensor=rank-video`; none
 * for the control build). Features go to an isolated replica, prediction —
 * called over gRPC, the KServe v2 inference protocol — is pinned to one of the
 * four shards, and two detectors watch that shard.
 */
import { join } from 'node:path';

export interface DemoBackends {
  readonly store: 'local' | 'clickhouse';
  readonly queue: 'inline' | 'bullmq';
  /** @default http://127.0.0.1:8123 */
  readonly clickhouseUrl?: string;
  /** @default redis://127.0.0.1:6379 */
  readonly redisUrl?: string;
  /** BullMQ key prefix. @default tandem-demo */
  readonly prefix?: string;
}

export interface DemoProjectOptions {
  readonly backends: DemoBackends;
  /** The demo's own directory; the local store lives under it. */
  readonly dir: string;
  readonly featuresReplicaUrl: string;
  /** The shards' HTTP addresses (their metrics and error records are read there). */
  readonly shardUrls: readonly string[];
  /** The same shards' KServe v2 gRPC addresses: ranking calls prediction over gRPC, through the router. */
  readonly grpcShardUrls: readonly string[];
  /** Index of the shard prediction is pinned to. */
  readonly pinnedShard: number;
  /** The sequential judge's first and last look. */
  readonly minTrials: number;
  readonly maxTrials: number;
  readonly warmup: string;
  readonly measure: string;
  /** Pairs per second. */
  readonly rate: number;
  readonly recorderRate: number;
}

/** Path of the tandem CLI this process runs from, for deploy commands. */
export const TANDEM_BIN = join(import.meta.dirname, '..', '..', 'bin', 'tandem.js');

const quote = (text: string): string => JSON.stringify(text);

export function demoConfigText(options: DemoProjectOptions): string {
  const { backends } = options;
  // The arms' command goes through a shell: paths are quoted; {revision} is validated (shell-safe characters only).
  const command = `'${process.execPath}' '${TANDEM_BIN}' example-stack --service ranking --port {port} --faults={revision}`;
  const pinned = options.shardUrls[options.pinnedShard]!;
  const pinnedGrpc = options.grpcShardUrls[options.pinnedShard]!;
  return [
    '# Written by `tandem demo` for the example stack it started (ports change every run).',
    backends.store === 'clickhouse' ? `store: { kind: clickhouse, url: ${quote(backends.clickhouseUrl ?? 'http://127.0.0.1:8123')}, database: tandem_demo }` : `store: { kind: local, dir: ${quote(join(options.dir, 'store'))} }`,
    backends.queue === 'bullmq' ? `queue: { kind: bullmq, redisUrl: ${quote(backends.redisUrl ?? 'redis://127.0.0.1:6379')}, prefix: ${backends.prefix ?? 'tandem-demo'} }` : 'queue: { kind: inline }',
    `recorder: { rate: ${options.recorderRate}, redact: { headers: [x-api-key] } }`,
    'workloads:',
    '  - name: ranking',
    '    tier: ranking',
    '    corpus: { lookback: 1h }',
    '    arms:',
    // Ranking calls prediction with the KServe v2 gRPC ModelInfer (INFERENCE_PROTOCOL=grpc), through the router.
    `      control: { deploy: { command: ${quote(command)}, env: { INFERENCE_PROTOCOL: grpc }, readyTimeout: 30s } }`,
    `      treatment: { deploy: { command: ${quote(command)}, env: { INFERENCE_PROTOCOL: grpc }, readyTimeout: 30s } }`,
    `    replay: { rate: ${options.rate}, concurrency: 16, timeout: 5s, minAchievedShare: 0.8 }`,
    // One process per arm (the default, said here because it was measured): three per arm, each sent every record
    // at this rate, would more than fill two cores shared with the stack (docs/demo.md).
    `    trials: { min: ${options.minTrials}, max: ${options.maxTrials}, warmup: ${options.warmup}, measure: ${options.measure}, maxReplacements: 4, processes: 1 }`,
    '    dependencies:',
    `      - { name: features, env: FEATURES_URL, policy: isolated, target: ${quote(options.featuresReplicaUrl)} }`,
    `      - { name: prediction, env: INFERENCE_URL, policy: pinned, shards: [${options.grpcShardUrls.map(quote).join(', ')}], pinned: [${quote(pinnedGrpc)}], grpc: { readMethods: ['inference.GRPCInferenceService/*'] } }`,
    '    detectors:',
    `      - { name: attributed-errors, kind: experiment-attributed, source: ${quote(`${pinned}/errors`)}, interval: 250ms, consecutive: 1 }`,
    // The backstop: restarts of the pinned shard, whoever caused them (slower than the attributed detector by design).
    `      - { name: pinned-shard-restarts, kind: dependency-health, source: ${quote(`${pinned}/metrics`)}, rule: { metric: worker_restarts_total, compare: increase, above: 0 }, warmup: 0s, interval: 1s, consecutive: 3 }`,
    // Judged on CPU per request (critical, 8%) and latency (judged: a significant regression beyond 8% fails the
    // experiment) and errors; the service's own work counter is reported beside them, not judged. How much two
    // freshly started ranking processes differ in CPU per request depends on the machine and its load: 1.5% per
    // trial on one two-core machine, 3-4% on others, about 5.5% on a CI machine where a clean change then stayed
    // undecided at 5% after 32 trials (+0.6% [-4.2%, +5.4%]; docs/demo.md). The clean change passes once
    // estimate + c·sd/√n < threshold, and at 32 trials c·sd/√n is about 0.9·sd: 8% leaves three standard errors
    // of margin at sd 5.5%. The regression step is +40% work (about +18% CPU per request), well beyond 8%, so
    // both are decided within about ten trials on a quiet machine. Latency is not critical: it is at the mercy of
    // whatever else the two cores run. alpha 0.01: the demo should almost never cry wolf.
    '    checks:',
    '      - { metric: cpu_per_request, direction: increase-is-bad, threshold: 0.08, critical: true, mustHaveData: true }',
    '      - { metric: latency_shift, direction: increase-is-bad, threshold: 0.08, critical: false }',
    '    harness:',
    '      alpha: 0.01',
    '      responses: { ranking: { path: items, id: id, k: 10 } }',
    '',
  ].join('\n');
}
