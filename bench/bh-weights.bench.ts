/**
 * `npm run bench -- bh-weights --demo DIR [--demo DIR ...]`: would Benjamini–Hochberg weighted towards the
 * critical metrics decide a regression sooner? Measured on stored experiments, not simulated: every regressed
 * experiment in each `tandem demo --dir DIR` store is judged again look by look, from its first look to the one
 * that decided it, with the stored trials, slots and the workload's own policies and α.
 *
 * Weighted BH (Genovese, Roeder & Wasserman, "False discovery control with p-value weighting", Biometrika 2006):
 * metric i's p-value is divided by a weight wᵢ, the weights averaging 1 over the family, and the usual step-up
 * runs on the quotients; the false-discovery rate stays at α. Here a critical metric weighs r times a
 * non-critical one; r = ∞ puts all of α on the critical metrics (the others judged with none, which no workload
 * should want: it is the bound on what any weighting could save).
 *
 * Baseline, same run: r = 1, which is the judge's own Benjamini–Hochberg. The re-judging must reproduce the
 * look each experiment was decided at (`rejudgedMatchesStored`), or none of the other figures mean anything.
 */
import { loadConfig } from '../core/config/load.js';
import { UsageError } from '../core/errors.js';
import { createLocalStore } from '../store/index.js';
import { designOf, judge, loadExperimentData, metricPolicies, type ExperimentVerdict, type MetricVerdict, type TrialMetric } from '../harness/index.js';

/** Critical metrics weigh r times the others; Infinity: all of α on the critical ones. */
const WEIGHTS = [1, 2, 3, Number.POSITIVE_INFINITY] as const;

/** The family the judge adjusts over, as it counted it (harness/judge/tested-family.ts), and Tarone's K. */
function testedFamily(verdict: ExperimentVerdict): { family: MetricVerdict[]; size: number } {
  const family = verdict.metrics.filter((m) => m.counted === true);
  return { family, size: verdict.familySize ?? family.length };
}

/** Step-up on pᵢ/wᵢ over K hypotheses (the weights averaging 1 over those counted); returns each metric's adjusted value. */
function weightedBenjaminiHochberg(family: readonly { readonly p: number; readonly critical: boolean }[], ratio: number, size: number): number[] {
  const m = family.length;
  const critical = family.filter((f) => f.critical).length;
  const weightOf = (isCritical: boolean): number => {
    if (critical === 0 || critical === m) return 1;
    if (ratio === Number.POSITIVE_INFINITY) return isCritical ? m / critical : 0;
    return ((isCritical ? ratio : 1) * m) / (ratio * critical + (m - critical));
  };
  const quotients = family
    .map((f, index) => ({ index, q: weightOf(f.critical) > 0 ? f.p / weightOf(f.critical) : Number.POSITIVE_INFINITY }))
    .sort((a, b) => a.q - b.q);
  const adjusted = new Array<number>(m).fill(1);
  let running = Number.POSITIVE_INFINITY;
  for (let rank = m; rank >= 1; rank--) {
    const { index, q } = quotients[rank - 1]!;
    running = Math.min(running, (q * Math.max(m, size)) / rank);
    adjusted[index] = Math.min(1, running);
  }
  return adjusted;
}

/** Whether a look calls a regression with the family adjusted at this weight (the judge's rule otherwise: harness/judge/verdict.ts). */
function regressedAt(verdict: ExperimentVerdict, alpha: number, ratio: number): boolean {
  const { family, size } = testedFamily(verdict);
  const adjusted = weightedBenjaminiHochberg(
    family.map((m) => ({ p: m.pValue, critical: m.policy?.critical === true })),
    ratio,
    size,
  );
  return family.some((m, i) => {
    if (!(adjusted[i]! < alpha) || !m.policy) return false;
    const { direction, threshold } = m.policy;
    return (direction !== 'decrease-is-bad' && m.estimate >= threshold) || (direction !== 'increase-is-bad' && m.estimate <= -threshold);
  });
}

interface StepResult {
  readonly store: string;
  readonly experiment: string;
  readonly storedTrials: number;
  /** The look each weight first calls the regression at, per weight (undefined: not within the stored trials). */
  readonly decidedAt: Record<string, number | undefined>;
}

async function stepsOf(dir: string): Promise<StepResult[]> {
  const { config } = await loadConfig({ path: `${dir}/tandem.config.yaml`, requireFile: true });
  const store = createLocalStore({ dir: `${dir}/store` });
  const results: StepResult[] = [];
  for (const record of await store.experiments.list()) {
    if (record.status !== 'regressed' || !record.verdict) continue;
    const workload = config.workloads.find((w) => w.name === record.workload);
    if (!workload) throw new UsageError(`${dir}/tandem.config.yaml has no workload ${JSON.stringify(record.workload)}, which experiment ${record.id} ran`);
    const data = await loadExperimentData(store, record.id, { resamples: 0 });
    const byTrial = new Map<number, TrialMetric[]>();
    for (const metric of data.metrics) byTrial.set(metric.trial, [...(byTrial.get(metric.trial) ?? []), metric]);
    const trials = [...byTrial.keys()].sort((a, b) => a - b);
    // As the judge judged it while it ran (harness/checks/evaluate.ts): the design stored in its spec, the workload's α.
    const design = designOf(record.spec, workload);
    const alpha = workload.harness.alpha;
    const decidedAt: Record<string, number | undefined> = {};
    for (let n = Math.max(2, design.minTrials); n <= trials.length; n++) {
      const verdict = judge(
        trials.slice(0, n).flatMap((t) => byTrial.get(t)!),
        { policies: metricPolicies(workload.checks), alpha, minPoints: workload.harness.minPoints, slotSigns: data.slotSigns, design },
      );
      for (const ratio of WEIGHTS) if (decidedAt[String(ratio)] === undefined && regressedAt(verdict, alpha, ratio)) decidedAt[String(ratio)] = n;
      if (WEIGHTS.every((ratio) => decidedAt[String(ratio)] !== undefined)) break;
    }
    results.push({ store: dir, experiment: record.id, storedTrials: trials.length, decidedAt });
  }
  return results;
}

/** Every `--demo DIR`; anything else, or a `--demo` without its directory, is refused by name. */
function demoDirs(args: readonly string[]): string[] {
  const dirs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const dir = args[i + 1];
    if (args[i] !== '--demo') throw new UsageError(`unknown argument ${JSON.stringify(args[i]!.slice(0, 100))}: bh-weights takes --demo DIR, repeated`);
    if (dir === undefined || dir.startsWith('--')) throw new UsageError('--demo needs a directory (a `tandem demo --dir DIR` run)');
    dirs.push(dir);
    i++;
  }
  return dirs;
}

export async function run(args: string[]): Promise<void> {
  const dirs = demoDirs(args);
  if (dirs.length === 0) throw new UsageError('name at least one store: --demo DIR (a `tandem demo --dir DIR` run)');
  const steps = (await Promise.all(dirs.map(stepsOf))).flat();
  if (steps.length === 0) throw new UsageError(`no regressed experiment in ${dirs.join(', ')}`);
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  log('store / experiment                       stored  r=1  r=2  r=3  r=∞');
  for (const s of steps)
    log(
      `${`${s.store} ${s.experiment}`.padEnd(40)} ${String(s.storedTrials).padStart(6)} ${WEIGHTS.map((r) => String(s.decidedAt[String(r)] ?? '-').padStart(4)).join(' ')}`,
    );
  const saved = (ratio: number): number[] => steps.map((s) => (s.decidedAt['1'] ?? s.storedTrials) - (s.decidedAt[String(ratio)] ?? s.storedTrials));
  const mean = (values: readonly number[]): number => Number((values.reduce((a, b) => a + b, 0) / values.length).toFixed(2));
  const rejudgedMatchesStored = steps.filter((s) => s.decidedAt['1'] === s.storedTrials).length / steps.length;
  const figures = {
    baseline: "r = 1: the judge's own Benjamini–Hochberg on the same stored looks",
    steps: steps.length,
    rejudgedMatchesStored,
    trialsSavedMeanWeight2: mean(saved(2)),
    trialsSavedMeanWeight3: mean(saved(3)),
    trialsSavedMeanAllOnCritical: mean(saved(Number.POSITIVE_INFINITY)),
    trialsSavedMaxAllOnCritical: Math.max(...saved(Number.POSITIVE_INFINITY)),
    stepsSoonerWeight2: saved(2).filter((v) => v > 0).length,
    stepsSoonerWeight3: saved(3).filter((v) => v > 0).length,
  };
  process.stdout.write(`${JSON.stringify({ bench: 'bh-weights', figures, targets: { rejudgedMatchesStored: { value: rejudgedMatchesStored, min: 1 } } })}\n`);
}
