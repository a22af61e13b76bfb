/**
 * The example stack's capacity story (HiLO §4), shared by the capacity test
 * in the suite, `npm run bench -- capacity` and `tandem demo`.
 *
 * The feature store is the bottleneck: it serves a fixed number of documents
 * per second, sized so the baseline peak uses 60% of it, and it has no
 * degradation levels of its own. At 2× it would need 120%: uncoordinated,
 * its queue grows until ranking's deadline for features expires and users
 * get no results. Coordinated, the controller sees the feature store's
 * load-factor and moves ranking to a state that scores a fifth of the
 * documents (L2), which relieves the feature store at a small quality cost,
 * then steps back to L0 one state at a time after the overload.
 */
import type { CorpusRecord } from '../../core/model.js';
import type { LatticeConfig } from '../../core/config/lattice-schema.js';
import { parseConfigText } from '../../core/config/load.js';
import { systemClock } from '../../core/clock.js';
import {
  LatticeController,
  LoadFactors,
  rankedIds,
  runCapacityTest,
  startControllerServer,
  type CapacityBucket,
  type CapacityProfile,
  type CapacitySummary,
  type Decision,
} from '../../lattice/index.js';
import { rankingCorpus } from './ranking-corpus.js';
import { startStack, type Stack } from './start-stack.js';
import { capacityRateFor, rankingLoadFactorAt } from './capacity-rate.js';
import type { StackFaults } from './faults.js';

/**
 * The example stack's lattice. Thresholds are on the product load-factor (the
 * max over services; the feature store's is the share of its throughput in use).
 * L1 takes multi-queries away (relieves ranking and prediction CPU, not the
 * feature store), L2 scores a fifth of the documents; recoverBelow is set
 * below what each state leaves of a 2× load, so the state holds through the
 * overload and steps down once the load is back at the baseline.
 */
export const EXAMPLE_LATTICE_YAML = `lattices:
  - name: serving
    services: { ranking: { maxLevel: 5 }, prediction: { maxLevel: 3 }, features: { maxLevel: 0 } }
    decisionPeriod: 250ms
    recoveryDamping: 4
    window: 500ms
    qualityTarget: { maxNdcgLoss: 0.5, maxNoResultShare: 0.01 }
    states:
      - { name: L0, threshold: 0, levels: { ranking: 0, prediction: 0, features: 0 } }
      - { name: L1, threshold: 0.8, recoverBelow: 0.7, levels: { ranking: 2, prediction: 0, features: 0 } }
      - { name: L2, threshold: 0.95, recoverBelow: 0.18, levels: { ranking: 4, prediction: 1, features: 0 } }
      - { name: L3, threshold: 1.4, recoverBelow: 0.1, levels: { ranking: 5, prediction: 2, features: 0 } }
`;

const DEFAULT_RATE = 20;
/** Where ranking's answer holds its ranked list. */
const RANKED = { path: 'items', id: 'id', k: 10 };

export function exampleLattice(): LatticeConfig {
  return parseConfigText(EXAMPLE_LATTICE_YAML, 'examples/stack/capacity-scenario.ts').lattices[0]!;
}

export interface ExampleCapacityOptions {
  /** Run the controller and have the services coordinate with it (HiLO); false: every service on its own. */
  readonly coordinated: boolean;
  /**
   * Requests per second at 1×. When absent, chosen for this host from ranking's
   * load-factor measured at 20 per second, at most 20 (see capacity-rate.ts).
   */
  readonly baselineRate?: number;
  /** Share of the feature store's throughput the baseline uses. @default 0.6 */
  readonly baselineUtilization?: number;
  /** @default { peak: 2, leadMs: 2000, rampMs: 4000, holdMs: 4000, cooldownMs: 6000 } */
  readonly profile?: Partial<Omit<CapacityProfile, 'baselineRate'>>;
  /** @default 500 */
  readonly bucketMs?: number;
  /** The frontend's deadline (x-deadline-ms): ranking answers 504 when features take longer. @default 400 */
  readonly deadlineMs?: number;
  readonly records?: readonly CorpusRecord[];
  /** Faults for the stack's services, e.g. `latency` to make ranking cost more CPU per request, as a slower host does. */
  readonly faults?: StackFaults;
  readonly signal?: AbortSignal;
}

export interface ExampleCapacityResult {
  readonly coordinated: boolean;
  readonly lattice: LatticeConfig;
  readonly profile: CapacityProfile;
  readonly bucketMs: number;
  readonly featuresDocsPerSecond: number;
  /** Ranking's load-factor at 20 requests per second as probed, when the rate was chosen from it. */
  readonly rankingLoadFactorAtDefaultRate?: number;
  readonly buckets: CapacityBucket[];
  readonly summary: CapacitySummary;
  /** Controller decisions, oldest first (empty when uncoordinated). */
  readonly decisions: Decision[];
}

/** The feature store's throughput that the baseline `rate` uses `utilization` of, for these records' candidates. */
function featuresDocsPerSecondFor(rate: number, records: readonly CorpusRecord[], utilization: number): number {
  const docs = records.map((r) => (JSON.parse(Buffer.from(r.body, 'base64').toString()) as { candidates: unknown[] }).candidates.length);
  const meanDocs = docs.reduce((a, b) => a + b, 0) / docs.length;
  return Math.round((rate * meanDocs) / utilization);
}

/**
 * What the story's probe reads on this host: ranking's load-factor at the default rate, on a fresh stack of the
 * story's shape without a controller. For tests that set a ranking cost relative to this host's.
 */
export async function rankingLoadFactorHere(options: { signal?: AbortSignal } = {}): Promise<number> {
  const records = rankingCorpus(40);
  const stack = await startStack({
    shards: 1,
    isolate: ['features', 'gateway', 'prediction', 'ranking'],
    featuresDocsPerSecond: featuresDocsPerSecondFor(DEFAULT_RATE, records, 0.6),
  });
  try {
    return await rankingLoadFactorAt(DEFAULT_RATE, stack.urls.ranking, records, systemClock, options.signal);
  } finally {
    await stack.stop();
  }
}

/** Run the capacity story once on a fresh stack; everything it started is stopped before it returns. */
export async function runExampleCapacity(options: ExampleCapacityOptions): Promise<ExampleCapacityResult> {
  const lattice = exampleLattice();
  const records = options.records ?? rankingCorpus(40);
  let baselineRate = options.baselineRate ?? DEFAULT_RATE;
  // The feature store is sized from the rate, so a rate chosen after the probe needs a stack of its own.
  const featuresDocsPerSecond = (rate: number): number => featuresDocsPerSecondFor(rate, records, options.baselineUtilization ?? 0.6);
  const bucketMs = options.bucketMs ?? 500;
  const decisions: Decision[] = [];
  const loadFactors = new LoadFactors(lattice, systemClock);
  const controller = new LatticeController({ lattice, loadFactors, clock: systemClock, onDecision: (d) => void decisions.push(d) });
  const server = options.coordinated ? await startControllerServer({ lattice, controller, loadFactors }) : undefined;
  const stop = new AbortController();
  // Deciding starts after the probe: a state the probe's own load brought about would change what it measures.
  let deciding: Promise<void> = Promise.resolve();
  // Services in child processes, so the load generator's thread does not skew their CPU load-factors.
  const start = (rate: number): Promise<Stack> =>
    startStack({
      shards: 1,
      isolate: ['features', 'gateway', 'prediction', 'ranking'],
      featuresDocsPerSecond: featuresDocsPerSecond(rate),
      ...(options.faults ? { faults: options.faults } : {}),
      ...(server ? { lattice: { url: server.url, pollMs: 100 } } : {}),
    });
  const headers = { 'x-deadline-ms': String(options.deadlineMs ?? 400) };
  let stack: Stack | undefined;
  try {
    stack = await start(baselineRate);
    let rankingLoadFactor: number | undefined;
    // The probe's answers are the test's L0 reference when it keeps its stack: the same requests with the test's
    // deadline (ranking reads no other header of theirs), at the baseline rate, before the controller decides
    // anything. It saves the test its own pass (about 2 s).
    let reference: Map<string, string[]> | undefined;
    if (options.baselineRate === undefined) {
      const answers = new Map<string, string[]>();
      const onAnswer = (record: CorpusRecord, status: number, body: string): void => {
        const ids = status < 400 ? rankedIds(body, RANKED) : undefined;
        if (ids && !answers.has(record.id)) answers.set(record.id, ids);
      };
      rankingLoadFactor = await rankingLoadFactorAt(DEFAULT_RATE, stack.urls.ranking, records, systemClock, options.signal, { headers, onAnswer });
      const chosen = capacityRateFor(rankingLoadFactor, DEFAULT_RATE);
      if (chosen === baselineRate && records.every((r) => answers.has(r.id))) reference = answers;
      if (chosen !== baselineRate) {
        const probed = stack;
        stack = undefined;
        await probed.stop();
        baselineRate = chosen;
        stack = await start(baselineRate);
      }
    }
    if (server) deciding = controller.run(stop.signal);
    const profile: CapacityProfile = { baselineRate, peak: 2, leadMs: 2_000, rampMs: 4_000, holdMs: 4_000, cooldownMs: 6_000, ...options.profile };
    const { buckets, summary } = await runCapacityTest({
      url: stack.urls.ranking,
      records,
      profile,
      ranking: RANKED,
      clock: systemClock,
      bucketMs,
      stabilityBuckets: 6,
      rollingBuckets: 3,
      headers,
      ...(reference ? { reference } : {}),
      ...(server ? { controllerUrl: server.url, states: lattice.states.map((s) => s.name) } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return {
      coordinated: options.coordinated,
      lattice,
      profile,
      bucketMs,
      featuresDocsPerSecond: featuresDocsPerSecond(baselineRate),
      ...(rankingLoadFactor !== undefined ? { rankingLoadFactorAtDefaultRate: rankingLoadFactor } : {}),
      buckets,
      summary,
      decisions,
    };
  } finally {
    await stack?.stop();
    stop.abort();
    await deciding;
    await server?.close();
  }
}
