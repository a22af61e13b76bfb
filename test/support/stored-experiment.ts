/**
 * A paired experiment written straight into a store, as a finished run leaves
 * it: its record with completed trials (slots alternating), each trial's
 * outcomes of both arms, the arms' CPU marks and RSS scrapes, and — when
 * `measured` — each trial's stored metrics, computed as the executor does
 * when a trial completes. Written one trial at a time in batches, so a
 * million-pair experiment never sits in memory (the scale bench uses it).
 */
import { seededRandom, type ExperimentRecord, type RequestOutcome, type Sample, type TrialRecord } from '../../core/index.js';
import type { Store } from '../../store/index.js';
import { measureCompletedTrial } from '../../harness/index.js';

export interface StoredExperimentOptions {
  readonly id: string;
  readonly trials: number;
  readonly pairsPerTrial: number;
  readonly seed?: number;
  /** Relative latency and CPU shift of the treatment. @default 0 */
  readonly shift?: number;
  /** Store each trial's metrics as the executor does (a `trial-metrics` event). @default true */
  readonly measured?: boolean;
  /** Write a second, replaced attempt of trial 0 before its completed one (its outcomes must not count). @default false */
  readonly replacedAttempt?: boolean;
  readonly startMs?: number;
  /** Called after each completed trial is stored (and measured), with how many trials are complete: where a run looks. */
  readonly afterTrial?: (completed: number) => Promise<void>;
}

export interface StoredExperiment {
  readonly record: ExperimentRecord;
  /** Wall time spent computing and storing the trials' metrics (what the executor does as each trial completes). */
  readonly measureMs: number;
}

const BATCH = 20_000;

export async function writeStoredExperiment(store: Store, options: StoredExperimentOptions): Promise<StoredExperiment> {
  const random = seededRandom(options.seed ?? 1);
  const shift = options.shift ?? 0;
  const startMs = options.startMs ?? Date.UTC(2026, 11, 1, 10, 0, 0);
  const trialMs = 60_000 + options.pairsPerTrial * 2;
  const trials: TrialRecord[] = [];
  let measureMs = 0;
  const record = (status: ExperimentRecord['status']): ExperimentRecord => ({
    id: options.id,
    workload: 'scale',
    status,
    createdAtMs: startMs,
    updatedAtMs: startMs + trials.length * trialMs + 1,
    seed: options.seed ?? 1,
    spec: { kind: 'experiment', arms: 'deployed', design: { minTrials: 4, maxTrials: options.trials } },
    trials: [...trials],
  });
  await store.experiments.put(record('running'));
  for (let t = 0; t < options.trials; t++) {
    const trialStart = startMs + t * trialMs;
    const attempts = t === 0 && options.replacedAttempt ? [1, 2] : [1];
    for (const attempt of attempts) {
      const replaced = attempt < attempts.length;
      const drift = Math.exp(0.05 * (random() - 0.5));
      let batch: RequestOutcome[] = [];
      for (let r = 0; r < options.pairsPerTrial; r++) {
        const cost = 5 * Math.exp(random() * 1.5);
        for (const arm of ['control', 'treatment'] as const) {
          // A replaced attempt was much slower: counting it would show in every latency figure.
          const latencyMs = cost * drift * (arm === 'treatment' ? 1 + shift : 1) * Math.exp(0.2 * (random() - 0.5)) * (replaced ? 10 : 1);
          const failed = random() < 0.002;
          batch.push({
            experimentId: options.id,
            trial: t,
            attempt,
            arm,
            recordId: `r${r}`,
            intendedMs: trialStart + 5_000 + r * 2,
            latencyMs,
            status: failed ? 503 : 200,
            bytes: 400 + (r % 50),
            errorClass: failed ? '5xx' : '',
            bodyHash: '',
            first: (r + t) % 2 === 0,
          });
        }
        if (batch.length >= BATCH) {
          await store.outcomes.append(batch);
          batch = [];
        }
      }
      await store.outcomes.append(batch);
      const endMs = trialStart + 5_000 + options.pairsPerTrial * 2;
      const samples: Sample[] = [];
      for (const arm of ['control', 'treatment'] as const) {
        const cpuPerRequest = 0.0005 * drift * (arm === 'treatment' ? 1 + shift : 1);
        samples.push({
          experimentId: options.id,
          trial: t,
          arm,
          metric: 'process_cpu_seconds',
          timeMs: trialStart + 5_000,
          value: 10,
          labels: { mark: 'measure-start' },
        });
        samples.push({
          experimentId: options.id,
          trial: t,
          arm,
          metric: 'process_cpu_seconds',
          timeMs: endMs,
          value: 10 + cpuPerRequest * options.pairsPerTrial,
          labels: { mark: 'measure-end' },
        });
        for (let s = trialStart + 5_000; s <= endMs; s += 10_000)
          samples.push({ experimentId: options.id, trial: t, arm, metric: 'process_rss_bytes', timeMs: s, value: 80e6 * (1 + 0.01 * random()) });
      }
      await store.samples.append(samples);
      const slots = t % 2 === 0 ? ({ control: 'A', treatment: 'B' } as const) : ({ control: 'B', treatment: 'A' } as const);
      const trial: TrialRecord = replaced
        ? { index: t, attempt, status: 'replaced', startedAtMs: trialStart, endedAtMs: endMs, reason: 'load failed', details: { slots } }
        : {
            index: t,
            attempt,
            status: 'completed',
            startedAtMs: trialStart,
            endedAtMs: endMs,
            details: { slots, load: 'ok', targetRate: 500, achievedRate: 500 },
          };
      trials.push(trial);
      await store.experiments.put(record('running'));
      if (replaced) continue;
      if (options.measured !== false) {
        const measuring = performance.now();
        await measureCompletedTrial(store, options.id, trial, { seed: options.seed ?? 1, nowMs: endMs });
        measureMs += performance.now() - measuring;
      }
      await options.afterTrial?.(t + 1);
    }
  }
  const finished = record('completed');
  await store.experiments.put(finished);
  return { record: finished, measureMs };
}
