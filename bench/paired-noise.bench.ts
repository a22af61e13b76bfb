/**
 * `npm run bench -- paired-noise` (issue 30, a measurement study): what a paired trial's CPU per request is
 * made of on real processes, and what a step costs. Each trial starts two fresh example ranking processes of the
 * same build (the second with --treatment-faults, if given), as a trial deploys control and treatment, sends
 * every recorded /rank body to both at once (the first side drawn per pair, as the replayer does) for a warm-up
 * and a measurement window, and reads each process's CPU from /proc at the window's start and after its last
 * answer. The paired effect is log(b/a); under A/A it is noise.
 *
 * Run twice in one bench, on the same machine: the stack's dependencies (features, gateway, prediction) served
 * inside the bench process, and isolated in their own processes as `tandem demo` and verdict-stack run them.
 *
 *   meanEffect…      mean per-trial paired effect, with its standard error (meanEffectSe…): about 0 under A/A,
 *                    the step's cost in CPU per request with --treatment-faults
 *   pairedSd…        sd of the per-trial paired effect (what the judge's t sees)
 *   pairedWithinSd…  the part of it the window's own noise makes (from the two halves of each window: a longer
 *                    window shrinks it)
 *   pairedBetweenSd… the rest: the two fresh processes ran at different speeds for the whole window (more
 *                    processes or more trials shrink it; a longer window does not)
 *   beyond5Percent…  share of trials whose paired effect is beyond ±5%
 *   unpairedSd…      baseline: the sd of one process's own log CPU per request from trial to trial (what a
 *                    design that measured the arms in different windows would see)
 *   minorFaultsPerRequest  median over the processes of minor page faults per answered request in the window
 *                    (what a page's first touch costs depends on the host: about 10 µs under a PVM hypervisor)
 *   rss…             the same for the resident set as the judge takes rss_bytes (log of the sides' mean RSS over the
 *                    window): rssMeanEffect, rssPairedSd, rssBeyond5Percent, and rssMb (median of the processes)
 *
 * Options: --trials N (12), --rate R (10 pairs/s), --shards N (2, prediction shards), --warmup S (2), --measure S (3), --node-args "…" (V8 flags
 * for both processes; SEED is replaced by one random number per trial, the same for both), --cpus LIST (both
 * processes pinned to these CPUs with taskset, e.g. both on one core of a busy machine), --treatment-faults LIST
 * (the second process's faults, e.g. latency=5: the demo's step), --cross-rounds N (both processes' rounds of
 * feature crossing, STACK_CROSS_ROUNDS: how much of a request's CPU the crossing the step repeats is),
 * --alternate-nice N (every other trial runs both processes at niceness N, e.g. -10 to put them ahead of a busy
 * process on their CPU; the figures are also given for each half, suffixed OwnNice and Reniced), --processes K
 * (K fresh processes per side, each sent every body at --rate, as `trials.processes` runs them: the figures take
 * a side's fastest process, as Tandem does, and are also given for the geometric mean of its processes,
 * suffixed MeanOfProcesses, and for its first process alone, suffixed OneProcess), --alternate-node-args "…"
 * (every other trial starts both processes with these node flags instead of --node-args; the figures are also given
 * for each half, suffixed OwnArgs and AlternateArgs: a V8 setting measured against the default in the same run),
 * --alternate-env "NAME=VALUE …" (every other trial adds this environment, alone or with --alternate-node-args:
 * an allocator's setting such as GLIBC_TUNABLES measured the same way),
 * --prewarm N (every process is sent N bodies one at a time once it is ready, before the paced warm-up: what a
 * runner warming started arms ahead of their trial would do), --inference grpc (the processes call prediction with the KServe v2 gRPC ModelInfer on one shard, as the demo's arms
 * do, instead of HTTP through the gateway).
 */
import { Agent } from 'node:http';
import { rankingCorpus } from '../examples/stack/ranking-corpus.js';
import { startStack, type StackService } from '../examples/stack/index.js';
import { median } from './support/median.js';
import { cpuNs, minorFaults, post, rssBytes, startRankingProcess } from './support/ranking-process.js';
import { cpuListFlag, numberFlag } from './support/bench-args.js';
import { formatFaults, parseFaults } from '../examples/stack/faults.js';
import { CROSS_ROUNDS, MAX_CROSS_ROUNDS } from '../examples/stack/model.js';
import { InternalError, UsageError } from '../core/errors.js';

/** CPU ms per request of each process of both sides ([side][process]) over the window, and over its two halves. */
type SideValues = readonly [readonly number[], readonly number[]];
interface TrialCpu {
  readonly whole: SideValues;
  readonly halves: readonly [SideValues, SideValues];
  /** Each process's mean resident set over the measurement window, in MB ([side][process]). */
  readonly rss: SideValues;
  /** Requests of the trial that failed (not counted as answered: CPU per request is per answered request). */
  readonly failed: number;
  /** Each process's minor page faults per answered request over the window ([side][process]). */
  readonly minorFaults: SideValues;
}

/** What a trial runs differently when the study alternates (its 2nd, 4th, … trials): nothing, or one of these. */
interface TrialVariant {
  readonly nice?: number;
  readonly nodeArgs?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

interface Options {
  readonly trials: number;
  readonly rate: number;
  readonly warmupS: number;
  readonly measureS: number;
  readonly nodeArgs: readonly string[];
  readonly shards: number;
  readonly fixedLayout: boolean;
  /** CPU list both processes are pinned to (taskset -c), as `trials.slotCpus` can pin both slots alike. */
  readonly cpus?: string;
  /** The second process's faults (STACK_FAULTS), canonical; none: A/A. */
  readonly treatmentFaults?: string;
  /** Both processes' rounds of feature crossing (STACK_CROSS_ROUNDS); none: the example's default. */
  readonly crossRounds?: number;
  /** Every other trial (the 2nd, 4th, …) runs both processes at this niceness; the rest at the bench's own. */
  readonly alternateNice?: number;
  /** Every other trial (the 2nd, 4th, …) starts both processes with these node flags instead of nodeArgs. */
  readonly alternateNodeArgs?: readonly string[];
  /** Every other trial (the 2nd, 4th, …) starts both processes with these environment variables added. */
  readonly alternateEnv?: Readonly<Record<string, string>>;
  /** Fresh processes per side in every trial, each sent every body at `rate` (as `trials.processes` does). */
  readonly processes: number;
  /** Bodies sent to every process one at a time once it is ready, before the paced warm-up (0: none). */
  readonly prewarm: number;
  /** How the ranking processes call prediction: HTTP through the gateway, or the KServe v2 gRPC ModelInfer on shard 0. */
  readonly inference: 'http' | 'grpc';
}

/** One trial: k fresh processes per side, every body to each, CPU per answered request over the measurement window. */
async function pairedTrial(baseEnv: NodeJS.ProcessEnv, bodies: readonly Buffer[], offset: number, o: Options, variant: TrialVariant): Promise<TrialCpu> {
  const seed = String(1 + Math.floor(Math.random() * 2 ** 30));
  const args = (variant.nodeArgs ?? o.nodeArgs).map((a) => a.replace('SEED', seed));
  const nice = variant.nice;
  const layout = { fixedLayout: o.fixedLayout, ...(o.cpus !== undefined ? { cpus: o.cpus } : {}), ...(nice !== undefined ? { nice } : {}) };
  const env = variant.env !== undefined ? { ...baseEnv, ...variant.env } : baseEnv;
  const treatmentEnv = o.treatmentFaults !== undefined ? { ...env, STACK_FAULTS: o.treatmentFaults } : env;
  const k = o.processes;
  // Side a's processes first, then side b's: process i of the list is side ⌊i / k⌋.
  const processes = await Promise.all(Array.from({ length: 2 * k }, (_, i) => startRankingProcess(i < k ? env : treatmentEnv, args, layout)));
  const agents = processes.map(() => new Agent({ keepAlive: true, maxSockets: 32 }));
  try {
    // Every process sent the same bodies one at a time, all processes at once, as a runner warming started arms would.
    await Promise.all(
      processes.map(async (p, i) => {
        for (let n = 0; n < o.prewarm; n++) await post(p.url, bodies[(offset + n) % bodies.length]!, agents[i]);
      }),
    );
    const answered = processes.map(() => 0);
    let failed = 0;
    // RSS sampled at every pair of the measurement window (the replayer samples it on an interval; a pair is finer).
    const rssSum = processes.map(() => 0);
    let rssSamples = 0;
    const inFlight = new Set<Promise<void>>();
    type Mark = { cpu: number[]; faults: number[]; answered: number[] };
    const mark = (): Mark => ({ cpu: processes.map((p) => cpuNs(p.pid).all), faults: processes.map((p) => minorFaults(p.pid)), answered: [...answered] });
    let start: Mark | undefined;
    let middle: Mark | undefined;
    const warmupPairs = Math.round(o.warmupS * o.rate);
    const measurePairs = Math.round(o.measureS * o.rate);
    const total = warmupPairs + measurePairs;
    const began = performance.now();
    // Bounded in count (total pairs) and time (the schedule's own length plus 10 s).
    for (let sent = 0; sent < total && performance.now() - began < (o.warmupS + o.measureS + 10) * 1000; sent++) {
      const waitMs = began + (sent * 1000) / o.rate - performance.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      if (sent === warmupPairs) start = mark();
      if (sent === warmupPairs + (measurePairs >> 1)) middle = mark();
      if (sent >= warmupPairs) {
        processes.forEach((p, i) => (rssSum[i]! += rssBytes(p.pid)));
        rssSamples++;
      }
      const body = bodies[(offset + sent) % bodies.length]!;
      // Every process in a random order, as the first side is drawn per pair.
      const order = processes.map((_, i) => i);
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      for (const i of order) {
        const p = post(processes[i]!.url, body, agents[i]).then((ok) => {
          if (ok) answered[i]!++;
          else failed++;
          inFlight.delete(p);
        });
        inFlight.add(p);
      }
    }
    await Promise.all(inFlight);
    const end = mark();
    const perRequest = (from: Mark, to: Mark, i: number): number => (to.cpu[i]! - from.cpu[i]!) / 1e6 / Math.max(1, to.answered[i]! - from.answered[i]!);
    const pair = (from: Mark, to: Mark): SideValues => [
      processes.slice(0, k).map((_, i) => perRequest(from, to, i)),
      processes.slice(k).map((_, i) => perRequest(from, to, k + i)),
    ];
    const rssMb = (i: number): number => rssSum[i]! / Math.max(1, rssSamples) / 2 ** 20;
    const rss: SideValues = [processes.slice(0, k).map((_, i) => rssMb(i)), processes.slice(k).map((_, i) => rssMb(k + i))];
    const faultsPerRequest = (i: number): number => (end.faults[i]! - start!.faults[i]!) / Math.max(1, end.answered[i]! - start!.answered[i]!);
    const faults: SideValues = [processes.slice(0, k).map((_, i) => faultsPerRequest(i)), processes.slice(k).map((_, i) => faultsPerRequest(k + i))];
    return { whole: pair(start!, end), halves: [pair(start!, middle!), pair(middle!, end)], rss, failed, minorFaults: faults };
  } finally {
    agents.forEach((a) => a.destroy());
    await Promise.all(processes.map((p) => p.stop()));
  }
}

const sdOf = (values: readonly number[]): number => {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1));
};

/** A side's value from its processes' values. */
type Summary = (values: readonly number[]) => number;
/** Tandem's: the fastest process (harness/metrics/trial-metrics.ts). */
const fastest: Summary = (values) => Math.min(...values);
/** The geometric mean: the mean on the log scale the judge works on. */
const logMean: Summary = (values) => Math.exp(values.reduce((sum, v) => sum + Math.log(v), 0) / values.length);
/** Process 0 only: what one process per side measures at this per-process load. */
const firstOnly: Summary = (values) => values[0]!;

/** A trial's paired effect: log(b/a) of the two sides' CPU per request. */
const effect = ([a, b]: SideValues, summary: Summary = fastest): number => Math.log(summary(b) / summary(a));

/** The figures of a set of trials (all of a study's, or the half at one niceness). */
function figuresOf(trials: readonly TrialCpu[], summary: Summary = fastest): Record<string, number> {
  const effects = trials.map((t) => effect(t.whole, summary));
  // Kalibera & Jones's split: the two halves of one window differ by the window's own noise only (a process's
  // speed is the same in both), so Var(e₁ − e₂)/4 is the within part of Var(e) and the rest is between processes.
  const within = sdOf(trials.map((t) => effect(t.halves[0], summary) - effect(t.halves[1], summary))) / 2;
  const total = sdOf(effects);
  const percent = (v: number): number => Number((100 * v).toFixed(2));
  return {
    meanEffect: percent(effects.reduce((a, b) => a + b, 0) / effects.length),
    meanEffectSe: percent(total / Math.sqrt(effects.length)),
    pairedSd: percent(total),
    pairedWithinSd: percent(within),
    pairedBetweenSd: percent(Math.sqrt(Math.max(0, total ** 2 - within ** 2))),
    beyond5Percent: Number((effects.filter((e) => Math.abs(e) > 0.05).length / effects.length).toFixed(2)),
    unpairedSd: percent(sdOf(trials.map((t) => Math.log(summary(t.whole[0]))))),
    cpuPerRequestMs: Number(median(trials.flatMap((t) => t.whole.flat()).sort((a, b) => a - b)).toFixed(2)),
    failedRequests: trials.reduce((sum, t) => sum + t.failed, 0),
    minorFaultsPerRequest: Number(median(trials.flatMap((t) => t.minorFaults.flat()).sort((a, b) => a - b)).toFixed(1)),
    ...rssFiguresOf(trials),
  };
}

/**
 * The resident set's paired effect, as the judge takes rss_bytes: log(b/a) of the sides' mean RSS over the window
 * (the mean of a side's processes, as harness/metrics/trial-metrics.ts summarises them).
 */
function rssFiguresOf(trials: readonly TrialCpu[]): Record<string, number> {
  const effects = trials.map((t) => Math.log(logMean(t.rss[1]) / logMean(t.rss[0])));
  const percent = (v: number): number => Number((100 * v).toFixed(2));
  return {
    rssMeanEffect: percent(effects.reduce((a, b) => a + b, 0) / effects.length),
    rssPairedSd: percent(sdOf(effects)),
    rssBeyond5Percent: Number((effects.filter((e) => Math.abs(e) > 0.05).length / effects.length).toFixed(2)),
    rssMb: Number(median(trials.flatMap((t) => t.rss.flat()).sort((a, b) => a - b)).toFixed(1)),
  };
}

const suffixed = (figures: Record<string, number>, suffix: string): Record<string, number> =>
  Object.fromEntries(Object.entries(figures).map(([k, v]) => [`${k}${suffix}`, v]));

/** The shard the processes call over gRPC, as the demo pins its arms' calls to one shard's gRPC port. */
function grpcShardOf(grpcShards: readonly string[]): string {
  const shard = grpcShards[0];
  if (shard === undefined) throw new InternalError('the example stack started no gRPC prediction port');
  return shard;
}

/** `--inference http|grpc`: how the processes call prediction (http when absent). */
function inferenceFlag(args: readonly string[]): 'http' | 'grpc' {
  const at = args.indexOf('--inference');
  if (at < 0) return 'http';
  const value = args[at + 1];
  if (value !== 'http' && value !== 'grpc') throw new UsageError(`--inference needs http or grpc, not ${JSON.stringify(value ?? '')}`);
  return value;
}

async function study(isolate: readonly StackService[], o: Options, label: string): Promise<Record<string, number>> {
  const stack = await startStack({ shards: o.shards, isolate });
  try {
    const inference =
      o.inference === 'grpc' ? { INFERENCE_URL: grpcShardOf(stack.urls.grpcShards), INFERENCE_PROTOCOL: 'grpc' } : { INFERENCE_URL: stack.urls.gateway };
    const env = {
      ...process.env,
      FEATURES_URL: stack.urls.features,
      ...inference,
      ...(o.crossRounds !== undefined ? { STACK_CROSS_ROUNDS: String(o.crossRounds) } : {}),
    };
    const bodies = rankingCorpus(3_000).map((r) => Buffer.from(r.body, 'base64'));
    const trials: TrialCpu[] = [];
    // Alternating trial by trial, not one setting after the other: a drift of the machine then reaches both alike.
    const alternates = o.alternateNice !== undefined || o.alternateNodeArgs !== undefined || o.alternateEnv !== undefined;
    const variantOf = (t: number): TrialVariant =>
      alternates && t % 2 === 1
        ? {
            ...(o.alternateNice !== undefined ? { nice: o.alternateNice } : {}),
            ...(o.alternateNodeArgs !== undefined ? { nodeArgs: o.alternateNodeArgs } : {}),
            ...(o.alternateEnv !== undefined ? { env: o.alternateEnv } : {}),
          }
        : {};
    for (let t = 0; t < o.trials; t++) {
      const variant = variantOf(t);
      const trial = await pairedTrial(env, bodies, t * Math.round((o.warmupS + o.measureS) * o.rate), o, variant);
      trials.push(trial);
      const perSide = trial.whole.map((side) => side.map((v) => v.toFixed(2)).join(' ')).join(' / ');
      const rss = trial.rss.map((side) => side.map((v) => v.toFixed(1)).join(' ')).join(' / ');
      const means = o.processes > 1 ? `, of the means ${(100 * effect(trial.whole, logMean)).toFixed(2)}%` : '';
      const shown = [
        variant.nice !== undefined ? `nice ${variant.nice}` : '',
        variant.nodeArgs !== undefined ? variant.nodeArgs.join(' ') : '',
        variant.env !== undefined
          ? Object.entries(variant.env)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')
          : '',
      ]
        .filter(Boolean)
        .join(', ');
      process.stderr.write(
        `paired-noise ${label}: trial ${t}${shown ? ` (${shown})` : ''}: ${perSide} ms/request, effect ${(100 * effect(trial.whole)).toFixed(2)}%${means} (halves ${trial.halves.map((h) => (100 * effect(h)).toFixed(2)).join(', ')}%); RSS ${rss} MB; minor faults ${trial.minorFaults.map((side) => side.map((v) => v.toFixed(0)).join(' ')).join(' / ')} per request${trial.failed > 0 ? `, ${trial.failed} request(s) failed` : ''}\n`,
      );
    }
    const perProcess =
      o.processes > 1 ? { ...suffixed(figuresOf(trials, logMean), 'MeanOfProcesses'), ...suffixed(figuresOf(trials, firstOnly), 'OneProcess') } : {};
    if (!alternates) return { ...figuresOf(trials), ...perProcess };
    const [own, other] = o.alternateNice !== undefined ? ['OwnNice', 'Reniced'] : ['OwnArgs', 'AlternateArgs'];
    return {
      ...figuresOf(trials),
      ...perProcess,
      ...suffixed(figuresOf(trials.filter((_, t) => t % 2 === 0)), own),
      ...suffixed(figuresOf(trials.filter((_, t) => t % 2 === 1)), other),
    };
  } finally {
    await stack.stop();
  }
}

/** --treatment-faults LIST, parsed as a deploy's faults are (a bad one is an InputError naming it), passed on canonical. */
function treatmentFaultsFlag(args: readonly string[]): { treatmentFaults?: string } {
  const at = args.indexOf('--treatment-faults');
  if (at < 0) return {};
  const value = args[at + 1];
  // An empty list would be A/A under a treatment's name: refused like a missing one.
  if (value === undefined || value.trim() === '' || value.startsWith('--')) throw new UsageError('--treatment-faults needs a list of faults, e.g. latency=5');
  return { treatmentFaults: formatFaults(parseFaults(value)) };
}

/** Node flags that load or run code: a study measures the example's processes, nothing else runs in them. */
const CODE_FLAGS = new Set(['--require', '--import', '--loader', '--experimental-loader', '--eval', '--print']);

/**
 * Node flags as argv words (--node-args, --alternate-node-args): each must be a flag (`--name` or `--name=value`,
 * a value of letters, digits and . , + -), so a word meant as a flag can never become the script node runs.
 */
function nodeArgsFlag(args: readonly string[], name: string): readonly string[] | undefined {
  const at = args.indexOf(`--${name}`);
  if (at < 0) return undefined;
  const words = (args[at + 1] ?? '').split(' ').filter(Boolean);
  if (words.length === 0) throw new UsageError(`--${name} needs node flags, e.g. "--max-semi-space-size=16"`);
  const bad = words.find((word) => !/^--[A-Za-z0-9][\w-]*(=[\w.,+-]+)?$/.test(word));
  if (bad !== undefined) throw new UsageError(`--${name} takes node flags only (--name or --name=value), got ${JSON.stringify(bad)}`);
  const code = words.find((word) => CODE_FLAGS.has(word.split('=')[0]!));
  if (code !== undefined) throw new UsageError(`--${name} takes no flag that loads code, got ${JSON.stringify(code)}`);
  return words;
}

/** --alternate-node-args "…": every other trial's node flags; not with --alternate-nice (one alternation at a time). */
function alternateNodeArgsFlag(args: readonly string[]): { alternateNodeArgs?: readonly string[] } {
  const words = nodeArgsFlag(args, 'alternate-node-args');
  if (words === undefined) return {};
  if (args.includes('--alternate-nice')) throw new UsageError('--alternate-node-args and --alternate-nice cannot be combined: alternate one thing at a time');
  return { alternateNodeArgs: words };
}

/**
 * --alternate-env "NAME=VALUE …": every other trial's added environment (e.g. GLIBC_TUNABLES=glibc.malloc.hugetlb=1).
 * Names are upper-case identifiers and values plain words (letters, digits and . , : = + -); not with --alternate-nice.
 */
function alternateEnvFlag(args: readonly string[]): { alternateEnv?: Readonly<Record<string, string>> } {
  const at = args.indexOf('--alternate-env');
  if (at < 0) return {};
  const words = (args[at + 1] ?? '').split(' ').filter(Boolean);
  if (words.length === 0) throw new UsageError('--alternate-env needs NAME=VALUE words, e.g. "GLIBC_TUNABLES=glibc.malloc.hugetlb=1"');
  const bad = words.find((word) => !/^[A-Z_][A-Z0-9_]*=[\w.,:=+-]*$/.test(word));
  if (bad !== undefined)
    throw new UsageError(`--alternate-env takes NAME=VALUE words (an upper-case name, a value of letters, digits and . , : = + -), got ${JSON.stringify(bad)}`);
  if (args.includes('--alternate-nice')) throw new UsageError('--alternate-env and --alternate-nice cannot be combined: alternate one thing at a time');
  return { alternateEnv: Object.fromEntries(words.map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)])) };
}

/** --alternate-nice N: a niceness from -20 to 19 other than 0 (0 would compare the bench's own priority with itself). */
function alternateNiceFlag(args: readonly string[]): { alternateNice?: number } {
  if (!args.includes('--alternate-nice')) return {};
  const nice = numberFlag(args, 'alternate-nice', 0, { min: -20, max: 19, integer: true });
  if (nice === 0) throw new UsageError('--alternate-nice needs a niceness other than 0, e.g. -10');
  return { alternateNice: nice };
}

export async function run(args: string[]): Promise<void> {
  const o: Options = {
    trials: numberFlag(args, 'trials', 12, { min: 2, max: 1_000, integer: true }),
    rate: numberFlag(args, 'rate', 10, { min: 1, max: 1_000 }),
    warmupS: numberFlag(args, 'warmup', 2, { min: 0.5, max: 60 }),
    measureS: numberFlag(args, 'measure', 3, { min: 0.5, max: 60 }),
    nodeArgs: nodeArgsFlag(args, 'node-args') ?? [],
    shards: numberFlag(args, 'shards', 2, { min: 1, max: 16, integer: true }),
    fixedLayout: args.includes('--fixed-layout'),
    ...cpuListFlag(args),
    ...treatmentFaultsFlag(args),
    ...(args.includes('--cross-rounds')
      ? { crossRounds: numberFlag(args, 'cross-rounds', CROSS_ROUNDS, { min: 1, max: MAX_CROSS_ROUNDS, integer: true }) }
      : {}),
    ...alternateNiceFlag(args),
    ...alternateNodeArgsFlag(args),
    ...alternateEnvFlag(args),
    processes: numberFlag(args, 'processes', 1, { min: 1, max: 8, integer: true }),
    prewarm: numberFlag(args, 'prewarm', 0, { min: 0, max: 1_000, integer: true }),
    inference: inferenceFlag(args),
  };
  const inProcess = args.includes('--isolated-only') ? {} : await study([], o, 'dependencies in-process');
  const isolated = await study(['features', 'gateway', 'prediction'], o, 'dependencies isolated');
  const figures = {
    baseline: 'unpairedSd: the same processes measured one arm at a time (trial-to-trial sd of one process of each pair)',
    trials: o.trials,
    rate: o.rate,
    warmupS: o.warmupS,
    measureS: o.measureS,
    nodeArgs: o.nodeArgs.join(' '),
    shards: o.shards,
    fixedLayout: o.fixedLayout,
    cpus: o.cpus ?? 'any',
    treatmentFaults: o.treatmentFaults ?? 'none (A/A)',
    crossRounds: o.crossRounds ?? CROSS_ROUNDS,
    alternateNice: o.alternateNice ?? 'none',
    alternateNodeArgs: o.alternateNodeArgs?.join(' ') ?? 'none',
    alternateEnv:
      o.alternateEnv !== undefined
        ? Object.entries(o.alternateEnv)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ')
        : 'none',
    processes: o.processes,
    prewarm: o.prewarm,
    ...Object.fromEntries(Object.entries(inProcess).map(([k, v]) => [`${k}InProcess`, v])),
    ...Object.fromEntries(Object.entries(isolated).map(([k, v]) => [`${k}Isolated`, v])),
  };
  // A study, not a gate: its one target is that the window's own noise, once paired, is below what one process
  // varies by from trial to trial (pairing cancels the machine's common-mode swings; docs/harness.md).
  process.stdout.write(
    `${JSON.stringify({ bench: 'paired-noise', figures, targets: { pairedWithinSdIsolated: { value: isolated.pairedWithinSd, max: isolated.unpairedSd } } })}\n`,
  );
}
