/**
 * What a trial record says about its trial (`TrialRecord.details`): written by the replayer, read back by the
 * harness, the dashboard and the CLI. One schema is both the type every reader compiles against and the check
 * a record read back from a store passes (store/record-guards.ts): a field renamed on one side fails the compile,
 * and a stored value of the wrong shape is dropped, never read as something else.
 */
import { z } from 'zod';

const count = z.number().int().min(0);
const finite = z.number().finite();
const perArm = <T extends z.ZodType>(value: T) => z.object({ control: value, treatment: value, 'control-prime': value.optional() });

/** A process an arm ran (its pid, and its start time to tell it from a later process with the same pid). */
export const trialProcessSchema = z.object({ arm: z.string(), pid: z.number().int().positive(), startTicks: z.number().int().min(0).optional() });

/**
 * The egress router's counters of one arm's calls to one dependency in a trial. The fields after `blocked` came
 * in later versions: a record an older Tandem wrote lacks them and is still read.
 */
export const dependencyCountersSchema = z.object({
  arm: z.enum(['control', 'treatment', 'control-prime']),
  dependency: z.string(),
  policy: z.enum(['isolated', 'pinned', 'shared']),
  calls: count,
  errors: count,
  blocked: count,
  refused: count.optional(),
  targets: z.array(z.string()).readonly().optional(),
  /** Calls per target, for checking where traffic went. */
  byTarget: z.record(z.string(), count).readonly().optional(),
  /** Counts per latency bucket (upper bounds in `bucketsMs`; the last is Infinity, stored as null). */
  latencyBuckets: z.array(count).readonly().optional(),
  bucketsMs: z.array(z.number().nullable()).readonly().optional(),
  /** Distinct replayed requests that caused calls, and calls per such request. */
  replayedRequests: count,
  fanOut: z.number().min(0).optional(),
});

/** The environment an arm ran in (replayer/fingerprint.ts): arms on different hardware differ for reasons that are not the change. */
export const fingerprintSchema = z.object({ cpuModel: z.string(), cores: count, kernel: z.string(), node: z.string(), arch: z.string(), host: z.string() });

export const trialDetailsSchema = z.object({
  sentPairs: count.optional(),
  measuredPairs: count.optional(),
  droppedPairs: count.optional(),
  duePairs: count.optional(),
  cutPairs: count.optional(),
  skippedTruncated: count.optional(),
  controlPrimeSkipped: count.optional(),
  maxLagMs: finite.optional(),
  meanLagMs: finite.optional(),
  targetRate: z.number().min(0).optional(),
  achievedRate: z.number().min(0).optional(),
  /** Whether the trial reached its load (`replay.minAchievedShare` of its rate); a failed one is excluded. */
  load: z.enum(['ok', 'failed']).optional(),
  /** Pairs in which each arm was sent first. */
  firstSide: perArm(count).optional(),
  /** Answers per arm and error class. */
  errors: perArm(z.record(z.string(), count)).optional(),
  connectionErrorShare: perArm(z.number().min(0).max(1)).optional(),
  corpusExhausted: z.boolean().optional(),
  /** Share of the arms' CPUs' time that went to other work while the trial measured. */
  otherWorkOnArmCpus: z.number().min(0).max(1).optional(),
  filteredRecords: count.optional(),
  /** Which slot (A: the first started, B) each arm took. */
  slots: z.object({ control: z.enum(['A', 'B']), treatment: z.enum(['A', 'B']) }).optional(),
  fingerprints: z.object({ control: fingerprintSchema.nullable(), treatment: fingerprintSchema.nullable() }).optional(),
  dependencies: z.array(dependencyCountersSchema).readonly().optional(),
  /** Arms of the next trial started during this one (trials.prestart). */
  prestarted: z.array(trialProcessSchema).readonly().optional(),
  /** The arms' processes of this trial while it runs (stopped by whoever resumes an interrupted run). */
  processes: z.array(trialProcessSchema).readonly().optional(),
  /** The warm-up requests sent to fresh arms before the trial (trials.prewarm). */
  prewarm: z.object({ sent: count, errors: count }).optional(),
  /** The end of a deploy command's output, kept with a trial its arm failed. */
  output: z.string().optional(),
  /** Fields stored with a shape other than their own, dropped when read back (store/record-guards.ts), each with why. */
  unreadable: z.array(z.string()).readonly().optional(),
});

export type TrialDetails = z.output<typeof trialDetailsSchema>;
export type TrialProcess = z.output<typeof trialProcessSchema>;
export type DependencyCounters = z.output<typeof dependencyCountersSchema>;
