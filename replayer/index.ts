/** Paired replay of a corpus into control and treatment: schedule, arms, trials, counters. */
export { intendedTime, pairsInWindow, firstSides, phaseOf, ARMS, type ArmName, type Phase } from './schedule.js';
export { pairedReplay, type PairedReplayOptions, type PairedReplayResult, type ReplayProgress, type TrialIdentity } from './paired-replay.js';
export { deployCommand, type DeployCommand, type DeployValues } from './deploy-command.js';
export {
  UrlArms,
  DeployedArms,
  ArmNotReadyError,
  type ArmDeployment,
  type ArmProvider,
  type ArmIdentity,
  type DeploySpec,
  type DeployedArmsOptions,
  type Slot,
} from './arms.js';
export { runTrials, ReplayFailedError, type RunTrialsOptions, type TrialsResult } from './trials.js';
export { scrapeCounters, type CounterScraperOptions, type ScrapedArm } from './counters.js';
export { localFingerprint, armFingerprint, fingerprintDifferences, FINGERPRINT_PATH, type Fingerprint } from './fingerprint.js';
export { processStats, type ProcessStats } from './process-stats.js';
export { cpusOfList, cpuTimesOf, otherWorkShare, type ArmCpuReading } from './arm-cpu-contention.js';
export { leftoversOf, recordProcess, stopLeftovers, type RecordedProcess } from './arm-processes.js';
