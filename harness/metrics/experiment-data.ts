/**
 * Everything the harness reads about one experiment to judge it, through the
 * store interfaces and without its outcomes: the record, its usable trials
 * (completed, load held) with each one's metrics (stored when the trial
 * completed; computed from that one trial's data when none were stored), the
 * trials left out and why. A look costs what its trials' metrics cost, not
 * what their outcomes do (docs/harness.md, "Where each statistic is computed").
 */
import { InputError, type ExperimentRecord, type TrialRecord } from '../../core/index.js';
import type { Store } from '../../store/index.js';
import { trialMetricsOf } from './stored-trial-metrics.js';
import type { TrialMetric } from './trial-metrics.js';

export interface ExcludedTrial {
  readonly index: number;
  readonly attempt: number;
  readonly status: TrialRecord['status'];
  readonly reason: string;
}

/** Which trials of a record are judged and which are left out, from the record alone. */
export interface TrialSelection {
  /** Completed attempts that held their load, in the record's order. */
  readonly used: readonly TrialRecord[];
  readonly excluded: readonly ExcludedTrial[];
  /** Slot sign per used trial (see `slotSign`). */
  readonly slotSigns: ReadonlyMap<number, SlotSign>;
}

export interface ExperimentData extends TrialSelection {
  readonly record: ExperimentRecord;
  /** Metrics of every used trial. */
  readonly metrics: readonly TrialMetric[];
  /** Used trials whose metrics were not stored and were computed from their outcomes by this read. */
  readonly recomputed: readonly number[];
  /** Lines skipped as unreadable while loading (a torn tail after a crash). */
  readonly corrupt: readonly string[];
}

/** +1 when the treatment ran in slot A of a trial, −1 in slot B, 0 when the arms have no slots (URLs): the one convention. */
export type SlotSign = 1 | -1 | 0;

export function slotSign(details: TrialRecord['details']): SlotSign {
  const treatment = details?.slots?.treatment;
  return treatment === 'A' ? 1 : treatment === 'B' ? -1 : 0;
}

/**
 * Whether the arms were deployed by Tandem, their processes' CPU then to be measured: deployed arms swap slots from
 * trial to trial, where URL arms keep control in slot A in every trial.
 */
export function deployedArmsOf(slotSigns: ReadonlyMap<number, number>): boolean {
  const signs = [...slotSigns.values()];
  return signs.includes(1) && signs.includes(-1);
}

/** Why trials are missing from the data, in words, for "no data" reasons. */
export function missingDataCauses(data: Pick<TrialSelection, 'excluded' | 'used'>): string[] {
  const causes: string[] = [];
  const load = data.excluded.filter((t) => t.reason.startsWith('load failed'));
  if (load.length > 0) causes.push(`${load.length} trial attempt(s) failed their load`);
  const exhausted = data.used.filter((t) => t.details?.corpusExhausted === true).length;
  if (exhausted > 0) causes.push(`the corpus ran out in ${exhausted} trial(s)`);
  const failed = data.excluded.filter((t) => !t.reason.startsWith('load failed'));
  if (failed.length > 0) causes.push(`${failed.length} trial attempt(s) ${[...new Set(failed.map((t) => t.status))].join('/')}`);
  return causes;
}

export function selectTrials(record: ExperimentRecord): TrialSelection {
  const excluded: ExcludedTrial[] = [];
  const used: TrialRecord[] = [];
  for (const t of record.trials) {
    if (t.status !== 'completed') {
      excluded.push({ index: t.index, attempt: t.attempt, status: t.status, reason: t.reason ?? t.status });
      continue;
    }
    if (t.details?.load === 'failed') {
      excluded.push({
        index: t.index,
        attempt: t.attempt,
        status: 'excluded',
        reason: `load failed: achieved ${String(t.details.achievedRate)} of ${String(t.details.targetRate)} pairs/s`,
      });
      continue;
    }
    used.push(t);
  }
  return { used, excluded, slotSigns: new Map(used.map((t) => [t.index, slotSign(t.details)])) };
}

export async function loadExperimentData(
  store: Pick<Store, 'experiments' | 'outcomes' | 'samples'>,
  experimentId: string,
  options: { readonly signal?: AbortSignal; readonly resamples?: number } = {},
): Promise<ExperimentData> {
  const record = await store.experiments.get(experimentId);
  if (!record) throw new InputError(`no experiment ${JSON.stringify(experimentId)} in the store (list them with \`tandem status\`)`);
  const corrupt: string[] = [];
  const selection = selectTrials(record);
  const { metrics, recomputed } = await trialMetricsOf(store, record, selection.used, {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.resamples !== undefined ? { resamples: options.resamples } : {}),
    onCorrupt: (where, reason) => corrupt.push(`${where}: ${reason}`),
  });
  return { record, ...selection, metrics, recomputed, corrupt };
}
