/**
 * Everything the harness reads about one experiment, loaded through the
 * store interfaces: the record, its usable trials (completed, load held)
 * with their outcomes, samples and router counters, the trials left out and
 * why, detector observations and lifecycle events.
 */
import { InputError, type DetectorObservation, type ExperimentEvent, type ExperimentRecord, type RequestOutcome, type Sample, type TrialRecord } from '../core/index.js';
import type { Store } from '../store/index.js';
import type { TrialData } from './trial-metrics.js';

export interface ExcludedTrial {
  readonly index: number;
  readonly attempt: number;
  readonly status: TrialRecord['status'];
  readonly reason: string;
}

export interface ExperimentData {
  readonly record: ExperimentRecord;
  readonly trials: readonly (TrialData & { readonly attempt: number; readonly record: TrialRecord })[];
  readonly excluded: readonly ExcludedTrial[];
  /** Slot sign per trial (see `slotSign`). */
  readonly slotSigns: ReadonlyMap<number, SlotSign>;
  readonly observations: readonly DetectorObservation[];
  readonly events: readonly ExperimentEvent[];
  /** Outcomes of arms other than control and treatment (control-prime), for response comparison. */
  readonly extraOutcomes: readonly RequestOutcome[];
  /** Lines skipped as unreadable while loading (a torn tail after a crash). */
  readonly corrupt: readonly string[];
}

/** +1 when the treatment ran in slot A of a trial, −1 in slot B, 0 when the arms have no slots (URLs): the one convention. */
export type SlotSign = 1 | -1 | 0;

export function slotSign(details: TrialRecord['details']): SlotSign {
  const slots = details?.slots as { treatment?: unknown } | undefined;
  return slots?.treatment === 'A' ? 1 : slots?.treatment === 'B' ? -1 : 0;
}

/** Why trials are missing from the data, in words, for "no data" reasons. */
export function missingDataCauses(data: Pick<ExperimentData, 'excluded' | 'trials'>): string[] {
  const causes: string[] = [];
  const load = data.excluded.filter((t) => t.reason.startsWith('load failed'));
  if (load.length > 0) causes.push(`${load.length} trial attempt(s) failed their load`);
  const exhausted = data.trials.filter((t) => t.record.details?.corpusExhausted === true).length;
  if (exhausted > 0) causes.push(`the corpus ran out in ${exhausted} trial(s)`);
  const failed = data.excluded.filter((t) => !t.reason.startsWith('load failed'));
  if (failed.length > 0) causes.push(`${failed.length} trial attempt(s) ${[...new Set(failed.map((t) => t.status))].join('/')}`);
  return causes;
}

export async function loadExperimentData(store: Pick<Store, 'experiments' | 'outcomes' | 'samples' | 'observations'>, experimentId: string, signal?: AbortSignal): Promise<ExperimentData> {
  const record = await store.experiments.get(experimentId);
  if (!record) throw new InputError(`no experiment ${JSON.stringify(experimentId)} in the store (list them with \`tandem status\`)`);
  const corrupt: string[] = [];
  const readOptions = { ...(signal ? { signal } : {}), onCorrupt: (where: string, reason: string) => corrupt.push(`${where}: ${reason}`) };
  const excluded: ExcludedTrial[] = [];
  const used: TrialRecord[] = [];
  for (const t of record.trials) {
    if (t.status !== 'completed') {
      excluded.push({ index: t.index, attempt: t.attempt, status: t.status, reason: t.reason ?? t.status });
      continue;
    }
    if (t.details?.load === 'failed') {
      excluded.push({ index: t.index, attempt: t.attempt, status: 'excluded', reason: `load failed: achieved ${String(t.details.achievedRate)} of ${String(t.details.targetRate)} pairs/s` });
      continue;
    }
    used.push(t);
  }
  const attemptOf = new Map(used.map((t) => [t.index, t.attempt]));
  const outcomes = new Map<number, RequestOutcome[]>();
  const extraOutcomes: RequestOutcome[] = [];
  for await (const o of store.outcomes.read(experimentId, readOptions)) {
    // Outcomes of replaced attempts stay stored; only the attempt that completed counts.
    if (attemptOf.get(o.trial) !== o.attempt) continue;
    if (o.arm === 'control' || o.arm === 'treatment') {
      const list = outcomes.get(o.trial) ?? [];
      list.push(o);
      outcomes.set(o.trial, list);
    } else extraOutcomes.push(o);
  }
  const samples = new Map<number, Sample[]>();
  for await (const s of store.samples.read(experimentId, readOptions)) {
    if (!attemptOf.has(s.trial)) continue;
    const list = samples.get(s.trial) ?? [];
    list.push(s);
    samples.set(s.trial, list);
  }
  const slotSigns = new Map<number, SlotSign>();
  const trials = used.map((t) => {
    slotSigns.set(t.index, slotSign(t.details));
    // Samples are scraped through warm-up and a little beyond; trial-metrics picks the measurement window.
    const trialSamples = (samples.get(t.index) ?? []).filter((s) => s.timeMs >= t.startedAtMs && (t.endedAtMs === undefined || s.timeMs <= t.endedAtMs + 5_000));
    return {
      index: t.index,
      attempt: t.attempt,
      record: t,
      outcomes: outcomes.get(t.index) ?? [],
      samples: trialSamples,
      ...(Array.isArray(t.details?.dependencies) ? { dependencies: t.details.dependencies as TrialData['dependencies'] } : {}),
    };
  });
  const observations = await store.observations.read(experimentId, readOptions);
  const events = await store.experiments.events(experimentId, readOptions);
  return { record, trials, excluded, slotSigns, observations, events, extraOutcomes, corrupt };
}
