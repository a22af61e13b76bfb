/**
 * `npm run bench -- verdict-stack [--runs N]`: the sequential judge on real
 * processes. The example stack runs once; the ranking service is deployed per
 * trial as control and treatment (crossover slots, CPU per request and RSS
 * measured from /proc), through the executor exactly as `tandem run` does it,
 * with the default judged metrics (the work counter is reported, not judged).
 * N runs of a treatment that adds about 2% CPU per request (`latency=2`: 2% more feature-crossing work, crossed
 * in the same loop as the real rows since 2026-12-03, when `latency=2` measured +2.1% to +3.0%, median +2.46%, and
 * `latency=3` +3.3% to +4.0% — the run prints the effect it measured) and N of an unchanged build, each arm three
 * fresh processes per trial (the default). Baseline: the same runs with one
 * process per arm (`--baseline`), as Tandem measured before issue 30.
 *
 * Options: --runs N (5), --processes K (3 per arm), --rate R (10 pairs/s per process), --arm-cpus LIST (both arms
 * pinned to these CPUs, as the demo pins them), --step FAULTS (latency=2), --unchanged-only.
 * --arm demo: the arms as the demo deploys them (its compiled service entry, no runtime flags, rankingArmCommand)
 * instead of through the CLI (`tandem example-stack --service ranking`).
 * --arm plain: the plain scoring service (examples/scorer: no runtime flags, no pinning, one downstream call) with
 * a workload that names only its arms and corpus, every trial and check setting Tandem's default; the step is
 * `work=1.08` (8% more of the scoring loop, about +5% CPU per request; the run prints what it measured). Figures plain…: its unchanged build
 * must pass and its step regress, as on a service Tandem was not tuned on (issue 68).
 * --prestart A:B: every run also with each trial's arms started during the previous trial's warm-up
 * (`trials.prestart`), slot A's on CPU list A and slot B's on B; each of its experiments right after the same
 * experiment without it, which is its same-run baseline (the figures without a prefix are the prestarted ones,
 * `asLanded…` the baseline's).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfigText, systemClock, type ExperimentRecord, type TandemConfig } from '../core/index.js';
import { UsageError } from '../core/errors.js';
import { cpuListArg, cpuListPairArg } from './support/bench-args.js';
import { createLocalStore } from '../store/index.js';
import { SharedSource } from '../guardrails/index.js';
import { InlineQueue, formatLook, parseRequest, runExperiment } from '../executor/index.js';
import { loadExperimentData } from '../harness/index.js';
import { rankingCorpus, startStack } from '../examples/stack/index.js';
import { scorerCorpus, startFeatureStore } from '../examples/scorer/index.js';
import { median } from './support/median.js';
import { rankingArmCommand } from '../examples/demo/demo-project.js';
import { compiledBuild } from '../bin/compiled-build.js';
import { pathToFileURL } from 'node:url';

const here = import.meta.dirname;

interface StackOptions {
  readonly processes: number;
  /** Pairs per second per process. */
  readonly rate: number;
  /** Both arms pinned to this CPU list (`trials.slotCpus` alike for both slots), or free to move. */
  readonly armCpus?: string;
  /** Where slot A's and slot B's arms start, both at once, before they are moved onto armCpus (`trials.startCpus`). */
  readonly startCpus?: readonly [string, string];
  /** Each trial's arms started during the previous trial's warm-up (`trials.prestart`). */
  readonly prestart?: boolean;
  /** The arms' deploy command; default: through the CLI. */
  readonly armCommand?: string;
}

function configText(dir: string, featuresUrl: string, gatewayUrl: string, o: StackOptions): string {
  const command =
    o.armCommand ?? `'${process.execPath}' '${join(here, '..', 'bin', 'tandem.js')}' example-stack --service ranking --port {port} --faults={revision}`;
  return [
    `store: { kind: local, dir: ${JSON.stringify(join(dir, '.tandem'))} }`,
    'workloads:',
    '  - name: ranking',
    '    tier: ranking',
    '    arms:',
    `      control: { deploy: { command: ${JSON.stringify(command)}, env: { FEATURES_URL: ${JSON.stringify(featuresUrl)}, INFERENCE_URL: ${JSON.stringify(gatewayUrl)} }, readyTimeout: 30s } }`,
    `      treatment: { deploy: { command: ${JSON.stringify(command)}, env: { FEATURES_URL: ${JSON.stringify(featuresUrl)}, INFERENCE_URL: ${JSON.stringify(gatewayUrl)} }, readyTimeout: 30s } }`,
    // 10 pairs/s per process (the default) keeps three processes per arm well below where two shared cores
    // saturate (queueing would swamp the effect).
    `    replay: { rate: ${o.rate}, concurrency: 32, timeout: 5s }`,
    `    trials: { min: 4, max: 12, warmup: 2s, measure: 3s, processes: ${o.processes}, prestart: ${o.prestart ?? false}${o.armCpus !== undefined ? `, slotCpus: [${JSON.stringify(o.armCpus)}, ${JSON.stringify(o.armCpus)}]` : ''}${o.startCpus !== undefined ? `, startCpus: [${o.startCpus.map((c) => JSON.stringify(c)).join(', ')}]` : ''} }`,
    // The demo's judgement: CPU per request critical at 1.5%, latency judged at 5%.
    '    checks:',
    '      - { metric: cpu_per_request, direction: increase-is-bad, threshold: 0.015, critical: true, mustHaveData: true }',
    '      - { metric: latency_shift, direction: increase-is-bad, threshold: 0.05, critical: false }',
    '',
  ].join('\n');
}

/** The plain service's workload as a new user writes it: arms and their environment, nothing else. */
function plainConfigText(dir: string, featuresUrl: string): string {
  const command = `'${process.execPath}' '${join(here, '..', 'examples', 'scorer', 'run.mjs')}' --port {port} --work {revision}`;
  const arm = `{ deploy: { command: ${JSON.stringify(command)}, env: { FEATURES_URL: ${JSON.stringify(featuresUrl)} } } }`;
  return [
    `store: { kind: local, dir: ${JSON.stringify(join(dir, '.tandem'))} }`,
    'workloads:',
    '  - name: scorer',
    '    tier: scorer',
    '    arms:',
    `      control: ${arm}`,
    `      treatment: ${arm}`,
    '',
  ].join('\n');
}

export async function run(args: string[]): Promise<void> {
  if (args.includes('--arm') && args[args.indexOf('--arm') + 1] === 'plain') return runPlain(args);
  const runs = Math.max(1, Number(args[args.indexOf('--runs') + 1]) || 5);
  const processes = Math.max(1, Number(args[args.indexOf('--processes') + 1]) || 3);
  const rate = Math.max(1, Number(args[args.indexOf('--rate') + 1]) || 10);
  // --arm-cpus LIST: both arms on these CPUs in every trial.
  const armCpus = cpuListArg(args, 'arm-cpus');
  // --start-cpus A:B: slot A's arm starts on CPU list A and slot B's on B, both at once, then both move onto --arm-cpus.
  const startCpus = cpuListPairArg(args, 'start-cpus');
  if (startCpus !== undefined && armCpus === undefined) throw new UsageError('--start-cpus needs --arm-cpus: the arms are moved onto them once started');
  const prestartCpus = cpuListPairArg(args, 'prestart');
  if (prestartCpus !== undefined && armCpus === undefined)
    throw new UsageError('--prestart needs --arm-cpus: the arms started early are moved onto them when their trial begins');
  const armKind = args.includes('--arm') ? args[args.indexOf('--arm') + 1] : 'cli';
  if (armKind !== 'cli' && armKind !== 'demo') throw new UsageError(`--arm takes cli, demo or plain, got ${JSON.stringify(armKind ?? '')}`);
  const armCommand =
    armKind === 'demo' ? rankingArmCommand(pathToFileURL(join(await compiledBuild(join(here, '..')), 'examples', 'demo', 'demo-project.js')).href) : undefined;
  const step = args.includes('--step') ? args[args.indexOf('--step') + 1]! : 'latency=2';
  // --unchanged-only: the A/A half alone, to study the unchanged build's spread run by run.
  const arms = args.includes('--unchanged-only') ? [''] : [step, ''];
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-verdict-stack-'));
  const stack = await startStack({ shards: 2, isolate: ['features', 'gateway', 'prediction'] });
  const configFor = (prestarted: boolean): TandemConfig => {
    const options = {
      processes,
      rate,
      ...(armCommand !== undefined ? { armCommand } : {}),
      ...(armCpus !== undefined ? { armCpus } : {}),
      ...(prestarted ? { startCpus: prestartCpus!, prestart: true } : startCpus !== undefined ? { startCpus } : {}),
    };
    return parseConfigText(configText(dir, stack.urls.features, stack.urls.gateway, options), join(dir, 'tandem.config.yaml'));
  };
  const configs = prestartCpus !== undefined ? [configFor(false), configFor(true)] : [configFor(false)];
  const store = createLocalStore({ dir: join(dir, '.tandem') });
  const sharedSource = new SharedSource(systemClock);
  // One queue per config (the prestarted one second), one experiment at a time.
  const queues = configs.map(
    (config) =>
      new InlineQueue({
        store,
        clock: systemClock,
        run: (id, signal) => runExperiment(id, { config, store, clock: systemClock, sharedSource, cwd: dir, signal }),
        concurrency: 1,
      }),
  );
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const results: { faults: string; prestarted: boolean; record: ExperimentRecord; seconds: number }[] = [];
  try {
    await store.init();
    await store.corpus.append(rankingCorpus(6_000));
    for (let i = 0; i < runs; i++) {
      for (const [faults, prestarted] of arms.flatMap((f) => configs.map((_, c) => [f, c === 1] as const))) {
        const started = Date.now();
        const queue = queues[prestarted ? 1 : 0]!;
        const { id } = await queue.submit(
          parseRequest({
            workload: 'ranking',
            change: `bench-${i}-${faults || 'clean'}${prestarted ? '-prestart' : ''}`,
            seed: 1_000 + i,
            ...(faults ? { treatmentRevision: faults } : {}),
          }),
        );
        await queue.idle();
        const record = (await store.experiments.get(id))!;
        const seconds = (Date.now() - started) / 1000;
        results.push({ faults, prestarted, record, seconds });
        const metrics = (record.verdict?.metrics as { metric: string; verdict: string; estimate: number; low: number; high: number }[] | undefined) ?? [];
        // The headline metrics, and any other metric that regressed (an unchanged build regressed on rss_bytes or latency_p99 must say so).
        const brief = metrics
          .filter((m) => ['latency_shift', 'cpu_per_request', 'error_share'].includes(m.metric) || m.verdict === 'regression')
          .map((m) => `${m.metric} ${(m.estimate * 100).toFixed(2)}% [${(m.low * 100).toFixed(2)}, ${(m.high * 100).toFixed(2)}] ${m.verdict}`);
        log(`  per trial: ${await perTrialEffects(store, id)}`);
        log(
          `${faults || 'unchanged'}${prestarted ? ' (prestart)' : ''} run ${i + 1}: ${record.status} after ${String(record.verdict?.trials ?? '?')} trials, ${seconds.toFixed(0)} s; ${brief.join('; ')}${record.status === 'failed' ? ` (${record.reason ?? ''})` : ''}`,
        );
      }
    }
  } finally {
    for (const queue of queues) await queue.close();
    await store.close();
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const compared = configs.length > 1;
  // Without --prestart, every result; with it, the prestarted ones (their same-run baseline is asLanded).
  const figuresOf = (of: typeof results) => {
    const fault = of.filter((r) => r.faults !== '');
    const clean = of.filter((r) => r.faults === '');
    const decidedSeconds = of
      .filter((r) => r.record.verdict?.decided === true)
      .map((r) => r.seconds)
      .sort((a, b) => a - b);
    const measuredCpu = fault
      .map(
        (r) =>
          (r.record.verdict?.metrics as { metric: string; estimate: number }[] | undefined)?.find((m) => m.metric === 'cpu_per_request')?.estimate ??
          Number.NaN,
      )
      .filter(Number.isFinite);
    return {
      stepCpuEffectMedian: Number((median([...measuredCpu].sort((a, b) => a - b)) * 100).toFixed(2)),
      stackPower2Cpu: fault.filter((r) => r.record.status === 'regressed').length,
      stackAaRegressed: clean.filter((r) => r.record.status === 'regressed').length,
      stackAaPassed: clean.filter((r) => r.record.status === 'passed').length,
      stackAaInconclusive: clean.filter((r) => r.record.status === 'inconclusive').length,
      stackSecondsToDecision: Number(median(decidedSeconds).toFixed(1)),
      meanTrialsFault: Number((fault.reduce((s, r) => s + Number(r.record.verdict?.trials ?? 0), 0) / fault.length).toFixed(1)),
      meanTrialsUnchanged: Number((clean.reduce((s, r) => s + Number(r.record.verdict?.trials ?? 0), 0) / clean.length).toFixed(1)),
    };
  };
  if (results.every((r) => r.faults === '')) {
    process.stdout.write(
      `${JSON.stringify({ bench: 'verdict-stack', figures: { runs, stackAaRegressed: results.filter((r) => r.record.status === 'regressed' && r.prestarted === compared).length }, targets: {} })}\n`,
    );
    return;
  }
  const measured = figuresOf(results.filter((r) => r.prestarted === compared));
  const asLanded = compared ? figuresOf(results.filter((r) => !r.prestarted)) : undefined;
  const figures = {
    baseline: compared
      ? `the same experiments with each trial's arms started between trials (asLanded…), each run right before its prestarted twin; the unchanged build judged by the same judge in the same run`
      : `the unchanged build, judged by the same sequential judge in the same run; ${processes} process(es) per arm (run with --processes 1 for the measurement before issue 30)`,
    runs,
    processes,
    ratePerProcess: rate,
    armCpus: armCpus ?? 'free',
    arms: armCommand ?? 'through the CLI',
    startCpus: compared ? `${prestartCpus!.join(':')}, started during the previous trial's warm-up` : (startCpus?.join(':') ?? 'slots, one after the other'),
    step,
    ...measured,
    ...(asLanded
      ? {
          asLandedStartCpus: startCpus?.join(':') ?? 'slots, one after the other',
          ...Object.fromEntries(Object.entries(asLanded).map(([name, value]) => [`asLanded${name[0]!.toUpperCase()}${name.slice(1)}`, value])),
        }
      : {}),
  };
  const targets = {
    stackPower2Cpu: { value: figures.stackPower2Cpu, min: Math.ceil(runs * 0.8) },
    stackAaRegressed: { value: figures.stackAaRegressed, max: 0 },
    stackAaPassed: { value: figures.stackAaPassed, min: Math.ceil(runs * 0.8) },
  };
  process.stdout.write(`${JSON.stringify({ bench: 'verdict-stack', figures, targets })}\n`);
}

/**
 * `--arm plain`: N runs of the step and N of an unchanged build on the plain scoring service with Tandem's defaults.
 * Its same-run baseline is the unchanged build judged by the same judge (it must pass where the step regresses).
 */
async function runPlain(args: string[]): Promise<void> {
  const runs = Math.max(1, Number(args[args.indexOf('--runs') + 1]) || 5);
  const step = args.includes('--step') ? (args[args.indexOf('--step') + 1] ?? '') : 'work=1.08';
  if (!/^work=\d+(\.\d+)?$/.test(step))
    throw new UsageError(`--step with --arm plain takes work=F (the scorer's work, e.g. work=1.08), got ${JSON.stringify(step)}`);
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-verdict-plain-'));
  const features = await startFeatureStore();
  const config = parseConfigText(plainConfigText(dir, features.url), join(dir, 'tandem.config.yaml'));
  const store = createLocalStore({ dir: join(dir, '.tandem') });
  const sharedSource = new SharedSource(systemClock);
  const queue = new InlineQueue({
    store,
    clock: systemClock,
    run: (id, signal) =>
      runExperiment(id, { config, store, clock: systemClock, sharedSource, cwd: dir, signal, onLook: (look) => log(`    ${formatLook(look)}`) }),
    concurrency: 1,
  });
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const results: { step: boolean; record: ExperimentRecord; seconds: number }[] = [];
  try {
    await store.init();
    await store.corpus.append(scorerCorpus(4_000));
    for (let i = 0; i < runs; i++) {
      for (const stepped of [true, false]) {
        const started = Date.now();
        const { id } = await queue.submit(
          parseRequest({
            workload: 'scorer',
            change: `plain-${i}-${stepped ? 'step' : 'clean'}`,
            seed: 2_000 + i,
            ...(stepped ? { treatmentRevision: step } : {}),
          }),
        );
        await queue.idle();
        const record = (await store.experiments.get(id))!;
        const seconds = (Date.now() - started) / 1000;
        results.push({ step: stepped, record, seconds });
        log(
          `${stepped ? step : 'unchanged'} run ${i + 1}: ${record.status} after ${String(record.verdict?.trials ?? '?')} trials, ${seconds.toFixed(0)} s; ${verdictBrief(record)}`,
        );
      }
    }
  } finally {
    await queue.close();
    await store.close();
    await features.close();
    await rm(dir, { recursive: true, force: true });
  }
  const stepped = results.filter((r) => r.step);
  const clean = results.filter((r) => !r.step);
  const cpuEffects = stepped
    .map((r) => metricsOf(r.record).find((m) => m.metric === 'cpu_per_request')?.estimate ?? Number.NaN)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  const figures = {
    baseline: 'the unchanged build judged by the same judge in the same run, on the same service and corpus',
    runs,
    step,
    settings: "Tandem defaults: no trials or checks keys, no runtime flags or CPU pinning in the arms' command",
    plainStepCpuEffectMedian: Number((median(cpuEffects) * 100).toFixed(2)),
    plainPower5Cpu: stepped.filter((r) => r.record.status === 'regressed').length,
    plainAaRegressed: clean.filter((r) => r.record.status === 'regressed').length,
    plainAaPassed: clean.filter((r) => r.record.status === 'passed').length,
    plainAaInconclusive: clean.filter((r) => r.record.status === 'inconclusive').length,
    plainSecondsToDecision: Number(
      median(
        results
          .filter((r) => r.record.verdict?.decided === true)
          .map((r) => r.seconds)
          .sort((a, b) => a - b),
      ).toFixed(1),
    ),
    meanTrialsStep: Number((stepped.reduce((s, r) => s + Number(r.record.verdict?.trials ?? 0), 0) / stepped.length).toFixed(1)),
    meanTrialsUnchanged: Number((clean.reduce((s, r) => s + Number(r.record.verdict?.trials ?? 0), 0) / clean.length).toFixed(1)),
  };
  const targets = {
    plainAaPassed: { value: figures.plainAaPassed, min: Math.ceil(runs * 0.8) },
    plainAaRegressed: { value: figures.plainAaRegressed, max: 0 },
    plainPower5Cpu: { value: figures.plainPower5Cpu, min: Math.ceil(runs * 0.8) },
    plainSecondsToDecision: { value: figures.plainSecondsToDecision, max: 300 },
  };
  process.stdout.write(`${JSON.stringify({ bench: 'verdict-stack', figures, targets })}\n`);
}

const metricsOf = (record: ExperimentRecord): { metric: string; verdict: string; estimate: number; low: number; high: number }[] =>
  (record.verdict?.metrics as { metric: string; verdict: string; estimate: number; low: number; high: number }[] | undefined) ?? [];

/** The headline metrics of a finished run, and any other metric that regressed. */
function verdictBrief(record: ExperimentRecord): string {
  return metricsOf(record)
    .filter((m) => ['latency_shift', 'cpu_per_request', 'error_share'].includes(m.metric) || m.verdict === 'regression')
    .map((m) => `${m.metric} ${(m.estimate * 100).toFixed(2)}% [${(m.low * 100).toFixed(2)}, ${(m.high * 100).toFixed(2)}] ${m.verdict}`)
    .join('; ');
}

/** Each trial's paired latency and CPU effects with the trial's slot order, so a run-long arm asymmetry shows. */
async function perTrialEffects(store: ReturnType<typeof createLocalStore>, id: string): Promise<string> {
  const data = await loadExperimentData(store, id, { resamples: 0 });
  return data.used
    .map((record) => {
      const metrics = data.metrics.filter((m) => m.trial === record.index);
      const pick = (name: string): string => {
        const m = metrics.find((x) => x.metric === name);
        return m ? `${(m.effect * 100).toFixed(2)}%` : '-';
      };
      const cpu = metrics.find((x) => x.metric === 'cpu_per_request');
      const single = cpu && !cpu.processes ? ` (µs c ${(cpu.control * 1e6).toFixed(0)} t ${(cpu.treatment * 1e6).toFixed(0)})` : '';
      const perProcess =
        single +
        (cpu?.processes
          ? ` (µs c ${cpu.processes.control.map((v) => (v * 1e6).toFixed(0)).join('/')} t ${cpu.processes.treatment.map((v) => (v * 1e6).toFixed(0)).join('/')})`
          : '');
      return `#${record.index}${slotsOf(record.details)} lat ${pick('latency_shift')} cpu ${pick('cpu_per_request')}${perProcess}`;
    })
    .join(' | ');
}

const slotsOf = (details: Readonly<Record<string, unknown>> | undefined): string => (details?.slots === undefined ? '' : ` ${JSON.stringify(details.slots)}`);
