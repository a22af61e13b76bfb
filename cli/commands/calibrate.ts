/**
 * `tandem calibrate --workload W`: an A/A run (control against control, same
 * trials, crossover and router as a real experiment), then per metric the
 * noise floor, the slot bias and the false-positive rate of the full judge
 * at the workload's trial count. Stored with the experiment; later verdicts
 * of the workload use the newest calibration.
 */
import { systemClock } from '../../core/index.js';
import { createStore } from '../../store/index.js';
import { controlAgainstControl, replayExperiment } from '../../executor/index.js';
import { calibrateStored, formatEffect, type Calibration } from '../../harness/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext } from '../cli-context.js';
import { parsePositiveInteger } from '../arguments.js';
import { armsFor, findWorkload, progressLine, sharedSource, withOverrides, type ReplayOptions } from './replay.js';

export interface CalibrateOptions extends Omit<ReplayOptions, 'treatment' | 'treatmentRevision' | 'controlPrime'> {
  readonly subsets?: string;
}

const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;

/** `secondsPerTrial`: how long one trial of the A/A run took (deploy, warm-up, measurement), to say how long a plan takes. */
export function formatCalibration(calibration: Calibration, secondsPerTrial?: number): string[] {
  const interval = calibration.falsePositiveInterval ? ` [${pct(calibration.falsePositiveInterval.low)}, ${pct(calibration.falsePositiveInterval.high)}]` : '';
  const lines = [
    `A/A calibration ${calibration.experimentId}: ${calibration.trials} trials; the judge's false-positive rate measured on ${calibration.subsets.toLocaleString('en-US')} sequential A/A experiments simulated from them (looks after trials ${calibration.design.minTrials} to ${calibration.design.maxTrials})`,
    `  false-positive rate of the judge: ${pct(calibration.falsePositiveRate)}${interval} called regressed, ${pct(calibration.anyMetricFlaggedRate)} with any judged metric flagged`,
    `  ${'metric'.padEnd(28)} ${'noise sd'.padStart(9)} ${'floor@max'.padStart(9)} ${'slot bias [95% CI]'.padStart(30)} ${'p'.padStart(7)} ${'lag-1'.padStart(6)} ${'FPR'.padStart(6)}`,
  ];
  const metrics = Object.entries(calibration.metrics).sort((a, b) => a[0].localeCompare(b[0]));
  for (const [metric, m] of metrics) {
    const scale = metric.startsWith('error_share') ? 'absolute' : 'relative';
    lines.push(
      `  ${metric.slice(0, 28).padEnd(28)} ${formatEffect(m.sd, scale)
        .replace(/^[+−±]/, '')
        .padStart(
          9,
        )} ${formatEffect(m.noiseFloor, scale).padStart(9)} ${`${formatEffect(m.slotBias.estimate, scale)} [${formatEffect(m.slotBias.low, scale)}, ${formatEffect(m.slotBias.high, scale)}]`.padStart(30)} ${(Number.isFinite(m.slotBias.pValue) ? m.slotBias.pValue.toPrecision(2) : 'n/a').padStart(7)} ${(m.autocorrelation !== undefined ? m.autocorrelation.toFixed(2) : 'n/a').padStart(6)} ${pct(m.falsePositiveRate).padStart(6)}`,
    );
  }
  for (const [metric, m] of metrics) if (m.warning) lines.push(`  warning: ${metric}: ${m.warning}`);
  // Where the noise comes from, and what a change of each size needs (Kalibera & Jones 2013).
  for (const metric of ['cpu_per_request', 'latency_shift']) {
    const m = calibration.metrics[metric];
    if (!m?.varianceSplit || !m.plan) continue;
    const split = m.varianceSplit;
    const sd = (variance: number): string => pct(Math.sqrt(variance));
    const duration = (trials: number): string =>
      secondsPerTrial !== undefined && Number.isFinite(trials) ? ` (about ${Math.ceil((trials * secondsPerTrial) / 60)} min)` : '';
    const trials = m.plan
      .map((p) => `${pct(p.change)}: ${Number.isFinite(p.trials) ? `${p.trials} trials${duration(p.trials)}` : 'over 1,000 trials'}`)
      .join(', ');
    lines.push(
      `  ${metric}: noise between processes of one arm ${sd(split.betweenProcesses)}, between trials ${sd(split.betweenTrials)}, within a trial ${sd(split.withinTrial)} (sd, ${split.processes} process(es) per arm); to pass a clean change within, and call twice, ${trials}`,
    );
    // More processes per arm remove slow processes from the arm's value; longer windows, the within-trial part; more trials, the rest.
    if (split.processes > 1 && split.betweenProcesses > split.betweenTrials)
      lines.push(
        `    processes of one arm differ more than trials do: look at the report's Processes section for slow ones; longer measurement windows narrow each process's own value`,
      );
    // One process per arm: a lottery of slow processes shows as a few trials far from the rest (sd well above the typical trial's).
    if (split.processes === 1 && m.typicalSd !== undefined && m.sd > 1.5 * m.typicalSd)
      lines.push(
        `    a few trials lie far from the rest (sd ${pct(m.sd)} against a typical ${pct(m.typicalSd)}): fresh processes that are slow for their whole life do this; try trials.processes: 3 (docs/harness.md, "Processes per arm")`,
      );
  }
  return lines;
}

export async function run(options: CalibrateOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx, true);
  const configured = findWorkload(config, options.workload);
  // At least as many trials as the workload's longest experiment, so its sequential judge can be replayed in full.
  const trials = options.trials !== undefined ? parsePositiveInteger(options.trials, '--trials') : Math.max(10, configured.trials.max);
  const workload = controlAgainstControl(withOverrides(configured, { ...options, trials: String(trials) }));
  const subsets = options.subsets !== undefined ? parsePositiveInteger(options.subsets, '--subsets') : 1_000;
  const seed = options.seed !== undefined ? parsePositiveInteger(options.seed, '--seed') : undefined;
  const replayOptions: ReplayOptions = {
    ...options,
    ...(options.control !== undefined ? { treatment: options.control } : {}),
    ...(options.controlRevision !== undefined ? { treatmentRevision: options.controlRevision } : {}),
  };
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  try {
    const result = await replayExperiment({
      workload,
      store,
      clock: systemClock,
      sharedSource,
      kind: 'calibration',
      spec: { calibrates: configured.name, design: { minTrials: configured.trials.min, maxTrials: configured.trials.max } },
      deployed: options.control === undefined && workload.arms?.control.deploy !== undefined,
      arms: (router) => armsFor(workload, replayOptions, router),
      ...(seed !== undefined ? { seed } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      onProgress: progressLine(ctx, trials),
      onStart: (id, usedSeed) =>
        ctx.err(`A/A calibration of ${configured.name}: experiment ${id}, seed ${usedSeed}, ${trials} trial(s), control against control`),
    }).finally(() => {
      if (process.stderr.isTTY) process.stderr.write('\n');
    });
    if (result.status !== 'completed') {
      ctx.err(`calibration ${result.experimentId} ${result.status}${result.reason ? `: ${result.reason}` : ''}; nothing calibrated`);
      return ExitCode.failure;
    }
    const { record: stored, calibration } = await calibrateStored(store, result.experimentId, {
      workload: configured,
      createdAtMs: Date.now(),
      subsets,
      processes: workload.arms?.control.deploy !== undefined ? configured.trials.processes : 1,
    });
    await store.experiments.put({ ...stored, updatedAtMs: Math.max(Date.now(), stored.updatedAtMs + 1), verdict: { calibration } });
    if (options.json) ctx.out(JSON.stringify(calibration, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v)));
    else {
      const completed = stored.trials.filter((t) => t.status === 'completed' && t.endedAtMs !== undefined);
      const secondsPerTrial =
        completed.length > 0 ? completed.reduce((sum, t) => sum + (t.endedAtMs! - t.startedAtMs), 0) / completed.length / 1000 : undefined;
      for (const line of formatCalibration(calibration, secondsPerTrial)) ctx.out(line);
    }
    return ExitCode.ok;
  } finally {
    await store.close();
  }
}
