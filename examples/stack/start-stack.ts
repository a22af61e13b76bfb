/**
 * Starts the example serving graph (FIRE Figure 1): query → ranking →
 * {features, gateway → prediction shards}. Services run in this process by
 * default; those named in `isolate` run as child processes (for anything a
 * test must kill, or a benchmark must keep off the load generator's thread).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { Clock } from '../../core/clock.js';
import type { DependencyErrorRecord } from '../../core/model.js';
import type { PredictionShard } from './prediction-service.js';
import type { StackFaults } from './faults.js';
import { startService, type RunningService, type ServiceConfig, type StackService } from './run-service.js';

export type { StackService } from './run-service.js';

export interface StackOptions {
  /** Prediction shards. @default 4 */
  readonly shards?: number;
  /** Workers per prediction shard. @default 2 */
  readonly workersPerShard?: number;
  /** Ranking workers. @default 2 */
  readonly rankingWorkers?: number;
  /** Faults carried by this deployment's ranking service. */
  readonly faults?: StackFaults;
  /** How long a crashed worker stays down. @default 250 */
  readonly restartDelayMs?: number;
  /** Services to run as child processes instead of in this process. @default [] */
  readonly isolate?: readonly StackService[];
  /** Clock of in-process services. */
  readonly clock?: Clock;
  /** In-process prediction shards also hand their error records here. */
  readonly onErrorRecord?: (record: DependencyErrorRecord) => void;
  /** The feature service's throughput limit in documents per second (unlimited when absent). */
  readonly featuresDocsPerSecond?: number;
  /** Coordinate ranking, features and prediction with this lattice controller. */
  readonly lattice?: { readonly url: string; readonly pollMs?: number };
}

export interface StackUrls {
  readonly query: string;
  readonly ranking: string;
  readonly features: string;
  readonly gateway: string;
  readonly shards: readonly string[];
  /** The shards' KServe v2 gRPC addresses (`http://host:port`), in shard order. */
  readonly grpcShards: readonly string[];
}

export interface Stack {
  readonly urls: StackUrls;
  /** Child process ids (services run in `isolate`). */
  readonly pids: readonly number[];
  /** The child process id of each service run in `isolate`. */
  readonly pidOf: Readonly<Partial<Record<StackService, number>>>;
  /** In-process prediction shards, for inspection in tests. */
  readonly shards: readonly PredictionShard[];
  stop(): Promise<void>;
}

/**
 * How a child service starts: from the compiled build when this module is compiled (bin/tandem.js runs
 * it), through tsx when it runs from source (tests, benches); tsx resolved from this package, so child
 * services start from any working directory.
 */
const SERVICE_ARGS = import.meta.url.endsWith('.js')
  ? [join(import.meta.dirname, 'service-main.js')]
  : ['--import', import.meta.resolve('tsx'), join(import.meta.dirname, 'service-main.ts')];

interface RunningChild extends RunningService {
  readonly pid: number;
}

/** A child process that has loaded its code and waits for its configuration on stdin. */
interface BootingChild {
  readonly child: ChildProcess;
  configure(config: ServiceConfig): Promise<RunningChild>;
}

/**
 * Spawn every isolated service at once and configure each when its
 * dependencies' URLs are known: process start-up (the slow part) overlaps,
 * while every service still listens on a port of its own choosing.
 */
function bootChild(service: StackService): BootingChild {
  const child = spawn(process.execPath, [...SERVICE_ARGS, service], {
    env: { ...process.env, STACK_CONFIG: 'stdin' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const messages: ((message: { ready?: boolean; urls?: string[]; grpcUrls?: string[] }) => void)[] = [];
  const exited = new Promise<never>((_, reject) => {
    child.once('exit', (code) => reject(new Error(`example ${service} exited with ${code} before it was ready`)));
    child.once('error', reject);
  });
  exited.catch(() => undefined);
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('{')) messages.shift()?.(JSON.parse(line) as { ready?: boolean; urls?: string[]; grpcUrls?: string[] });
  });
  return {
    child,
    async configure(config) {
      const ready = new Promise<{ urls?: string[]; grpcUrls?: string[] }>((resolve) => messages.push(resolve));
      child.stdin!.write(`${JSON.stringify(config)}\n`);
      const message = await Promise.race([ready, exited]);
      return { urls: message.urls ?? [], ...(message.grpcUrls ? { grpcUrls: message.grpcUrls } : {}), pid: child.pid!, close: () => stopChild(child) };
    },
  };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), 3_000);
    child.once('exit', () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const booting = new Map((options.isolate ?? []).map((service) => [service, bootChild(service)] as const));
  const started: (RunningService & { pid?: number })[] = [];
  const pidOf: Partial<Record<StackService, number>> = {};
  const base: ServiceConfig = {
    restartDelayMs: options.restartDelayMs ?? 250,
    ...(options.clock ? { clock: options.clock } : {}),
  };
  const coordinated: ServiceConfig = options.lattice ? { latticeUrl: options.lattice.url, latticePollMs: options.lattice.pollMs ?? 1_000 } : {};
  const start = async (service: StackService, config: ServiceConfig): Promise<RunningService> => {
    const child = booting.get(service);
    const running = child ? await child.configure(withoutFunctions(config)) : await startService(service, config);
    started.push(running);
    if (child) pidOf[service] = child.child.pid!;
    return running;
  };
  try {
    const [prediction, features] = await Promise.all([
      start('prediction', {
        ...base,
        shards: options.shards ?? 4,
        workers: options.workersPerShard ?? 2,
        ...(options.onErrorRecord ? { onErrorRecord: options.onErrorRecord } : {}),
        ...coordinated,
      }),
      start('features', { ...base, ...coordinated, ...(options.featuresDocsPerSecond ? { featuresDocsPerSecond: options.featuresDocsPerSecond } : {}) }),
    ]);
    const gateway = await start('gateway', { ...base, shardUrls: prediction.urls });
    const ranking = await start('ranking', {
      ...base,
      featuresUrl: features.urls[0]!,
      inferenceUrl: gateway.urls[0]!,
      workers: options.rankingWorkers ?? 2,
      ...(options.faults ? { faults: options.faults } : {}),
      ...coordinated,
    });
    const query = await start('query', { ...base, rankingUrl: ranking.urls[0]! });
    let stopped: Promise<void> | undefined;
    return {
      urls: {
        query: query.urls[0]!,
        ranking: ranking.urls[0]!,
        features: features.urls[0]!,
        gateway: gateway.urls[0]!,
        shards: prediction.urls,
        grpcShards: prediction.grpcUrls ?? [],
      },
      pids: started.flatMap((r) => (r.pid === undefined ? [] : [r.pid])),
      pidOf,
      shards: prediction.shards ?? [],
      stop: () => (stopped ??= stopAll(started)),
    };
  } catch (error) {
    await stopAll(started);
    await Promise.all([...booting.values()].map((b) => stopChild(b.child)));
    throw error;
  }
}

/** What can cross a process boundary: the clock and callbacks stay behind. */
function withoutFunctions(config: ServiceConfig): ServiceConfig {
  const { clock: _clock, onErrorRecord: _onErrorRecord, ...plain } = config;
  return plain;
}

/** Stop callers before callees, so no request is in flight to a closed service. */
async function stopAll(started: readonly RunningService[]): Promise<void> {
  for (const running of [...started].reverse()) await running.close();
}
