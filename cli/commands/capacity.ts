/**
 * `tandem capacity --workload W --lattice L --peak 2 --ramp 5m --hold 5m --cooldown 5m`:
 * replay the workload's corpus into its control deployment at the baseline
 * rate, ramp to `peak` × baseline, hold, cool down, with the lattice's
 * controller live (`--controller URL`, the one the services coordinate with).
 * The timeline (traffic, state, load-factor, quality, stability, no-result
 * rate per bucket) is stored as samples of a `capacity-…` experiment; the
 * verdict checks the lattice's quality target. Exit 0 within target, 1 not.
 */
import { InputError, UsageError, systemClock } from '../../core/index.js';
import { createStore, writeFileAtomic } from '../../store/index.js';
import { readCorpusWindow } from '../../recorder/index.js';
import { newExperimentId } from '../../executor/index.js';
import { resolve } from 'node:path';
import { renderCapacityHtml, runCapacityTest, storeCapacityTest, withinQualityTarget } from '../../lattice/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';
import { parsePositiveNumber, parseTimerDurationFlag } from '../arguments.js';
import { findWorkload, httpUrl } from './replay.js';

export interface CapacityOptions extends GlobalOptions {
  readonly workload: string;
  readonly lattice: string;
  readonly peak?: string;
  readonly baseline?: string;
  readonly lead?: string;
  readonly ramp?: string;
  readonly hold?: string;
  readonly cooldown?: string;
  readonly bucket?: string;
  readonly controller?: string;
  readonly url?: string;
  readonly html?: string;
}

export async function run(options: CapacityOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx);
  const workload = findWorkload(config, options.workload);
  const lattice = config.lattices.find((l) => l.name === options.lattice);
  if (!lattice)
    throw new UsageError(
      `no lattice named ${JSON.stringify(options.lattice)} in the config (known: ${config.lattices.map((l) => l.name).join(', ') || 'none'})`,
    );
  const ranking = workload.harness.responses?.ranking;
  if (!ranking) throw new UsageError(`workload ${workload.name} needs harness.responses.ranking: quality is NDCG@k against L0 answers`);
  const url = options.url !== undefined ? httpUrl(options.url, '--url') : workload.arms?.control.url?.replace(/\/$/, '');
  if (!url) throw new UsageError(`give --url (the deployment under test) or a control URL in workload ${workload.name}`);
  const profile = {
    baselineRate: options.baseline !== undefined ? parsePositiveNumber(options.baseline, '--baseline', 'requests per second') : workload.replay.rate,
    peak: options.peak !== undefined ? parsePositiveNumber(options.peak, '--peak', 'multiple of the baseline') : 2,
    leadMs: options.lead !== undefined ? parseTimerDurationFlag(options.lead, '--lead') : 60_000,
    rampMs: options.ramp !== undefined ? parseTimerDurationFlag(options.ramp, '--ramp') : 300_000,
    holdMs: options.hold !== undefined ? parseTimerDurationFlag(options.hold, '--hold') : 300_000,
    cooldownMs: options.cooldown !== undefined ? parseTimerDurationFlag(options.cooldown, '--cooldown') : 300_000,
  };
  const bucketMs = options.bucket !== undefined ? parseTimerDurationFlag(options.bucket, '--bucket') : 60_000;
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  try {
    await store.init();
    const tier = workload.corpus.tier ?? workload.tier;
    const records = [];
    for await (const r of readCorpusWindow(store.corpus, { tier, lookbackMs: workload.corpus.lookback, nowMs: Date.now(), limit: 2_000 })) records.push(r);
    if (records.length === 0) throw new InputError(`no recorded requests of tier ${tier} to replay`);
    const experimentId = newExperimentId('capacity', Date.now());
    ctx.err(
      `capacity test ${experimentId}: ${profile.baselineRate} req/s → ${profile.peak}× over ${profile.rampMs / 1000}s, hold ${profile.holdMs / 1000}s, cooldown ${profile.cooldownMs / 1000}s${options.controller ? `, controller ${options.controller}` : ', no controller (uncoordinated)'}`,
    );
    const { buckets, summary } = await runCapacityTest({
      url,
      records,
      profile,
      ranking,
      clock: systemClock,
      bucketMs,
      states: lattice.states.map((s) => s.name),
      concurrency: workload.replay.concurrency,
      timeoutMs: workload.replay.timeout,
      ...(options.controller !== undefined ? { controllerUrl: httpUrl(options.controller, '--controller') } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    const ok = withinQualityTarget(summary, lattice);
    await storeCapacityTest(
      store,
      { experimentId, workload: workload.name, lattice, profile, bucketMs, buckets, summary, coordinated: options.controller !== undefined, ok },
      systemClock,
    );
    if (options.html !== undefined) {
      const target = resolve(ctx.cwd, options.html);
      await writeFileAtomic(
        target,
        renderCapacityHtml({
          title: `capacity test ${experimentId}: ${workload.name} at ${profile.peak}×`,
          baselineRate: profile.baselineRate,
          bucketMs,
          buckets,
          summary,
          states: lattice.states.map((s) => s.name),
          ok,
        }),
      );
      ctx.err(`report written to ${target}`);
    }
    if (options.json) ctx.out(JSON.stringify({ experimentId, ok, summary, buckets }));
    else {
      const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;
      ctx.out(
        `capacity test ${experimentId}: ${ok ? 'within' : 'OUTSIDE'} the quality target (NDCG loss <= ${lattice.qualityTarget.maxNdcgLoss}, no-result <= ${pct(lattice.qualityTarget.maxNoResultShare)})`,
      );
      ctx.out(
        `  peak ${summary.peakRateReached.toFixed(0)} req/s; states up to ${summary.maxState ?? 'n/a'}, final ${summary.finalState ?? 'n/a'}; degraded ${summary.activeDegradationMs / 1000}s of ${summary.overloadDurationMs / 1000}s overload`,
      );
      ctx.out(
        `  quality: baseline ${summary.baselineQuality.toFixed(3)}, max loss ${summary.maxQualityLoss.toFixed(3)}; no-result max ${pct(summary.maxNoResultShare)}; recovery: quality ${summary.qualityRecoveryMs !== undefined ? `${summary.qualityRecoveryMs / 1000}s` : 'not within the test'}, stability ${summary.stabilityRecoveryMs !== undefined ? `${summary.stabilityRecoveryMs / 1000}s` : 'not within the test'}`,
      );
    }
    return ok ? ExitCode.ok : ExitCode.regression;
  } finally {
    await store.close();
  }
}
