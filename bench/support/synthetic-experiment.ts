/**
 * Synthetic paired experiments with realistic noise, for the verdict bench:
 * a fixed corpus whose records differ in cost (lognormal), a per-trial drift
 * shared by both arms (the machine got busier), a small per-trial drift of
 * each arm alone (placement: what pairing cannot cancel and what makes the
 * trial the unit of inference), per-request lognormal noise, a 0.1% error
 * rate on both arms, an optional slot bias (the arm started in slot A runs
 * slower, as a crossover's first-started process can), and an optional
 * multiplicative shift of the treatment. Slots follow DeployedArms' ABBA
 * order (core/slot-order.ts).
 */
import type { RequestOutcome, Sample } from '../../core/index.js';
import { seededRandom, treatmentSlotSign } from '../../core/index.js';
import type { TrialData } from '../../harness/index.js';

export interface SyntheticOptions {
  readonly seed: number;
  readonly trials: number;
  /** Records per trial (the default workload sends 50 pairs/s for 30 s: 1,500). */
  readonly records: number;
  /** Relative shift of the treatment's latency, e.g. 0.03. */
  readonly shift: number;
  /** sd of log record cost. @default 0.6 */
  readonly recordSigma?: number;
  /** sd of log per-trial drift shared by both arms. @default 0.05 */
  readonly trialDrift?: number;
  /** sd of the per-trial, per-arm relative drift. @default 0.005 */
  readonly armDrift?: number;
  /** sd of log per-request noise. @default 0.25 */
  readonly requestSigma?: number;
  /** Relative slowdown of the arm in slot A. @default 0 */
  readonly slotBias?: number;
  /** Processes per arm per trial; records rotate over them as the replayer sends them. @default 1 */
  readonly processes?: number;
  /** Share of fresh processes that are slow for their whole life (memory layout). @default 0 */
  readonly slowShare?: number;
  /** How much slower such a process is. @default 0.2 */
  readonly slowdown?: number;
  /** Lag-1 correlation of each arm's drift from trial to trial (AR(1)); 0 draws it afresh every trial. @default 0 */
  readonly armDriftRho?: number;
  /** Draw each arm's per-trial drift from Student's t with 3 df (scaled to the same sd) instead of a normal. */
  readonly heavyTails?: boolean;
  /** The treatment's share of slow processes, when a change makes them more or less common. @default slowShare */
  readonly treatmentSlowShare?: number;
  /** A change that hurts some trials only: in this share of trials (drawn at random) every treatment process is slower by `factor`. */
  readonly shock?: { readonly share: number; readonly factor: number };
  /**
   * Each process's CPU seconds over the measurement window, as the replayer samples them (`measure-start` and
   * `measure-end` marks): CPU per request is the request cost's level × the arm's and the process's factors, with
   * lognormal noise of this sd per process and trial. Absent: no CPU samples (CPU per request not measured).
   */
  readonly cpuSigma?: number;
  /** Told each trial `shock` hit, as it is drawn (what the judge cannot know, for the bench's accounting). */
  readonly onShock?: (trial: number) => void;
}

/** +1 when the treatment ran in slot A of trial t, −1 in slot B (the DeployedArms crossover). */
export const syntheticSlotSign = treatmentSlotSign;

/** Standard normal by Box–Muller from a seeded stream. */
export function normal(random: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** Student's t with 3 df, scaled to unit variance (its variance is 3). */
export const studentT3 =
  (z: () => number): (() => number) =>
  () =>
    z() / Math.sqrt((z() ** 2 + z() ** 2 + z() ** 2) / 3) / Math.sqrt(3);

/** Each process's CPU seconds at the window's start and end: 1 ms a request at level 1, `records` requests each. */
function cpuSamples(trial: number, records: number, processes: number, level: (arm: 'control' | 'treatment', process: number) => number): Sample[] {
  return (['control', 'treatment'] as const).flatMap((arm) =>
    Array.from({ length: processes }, (_, process) => {
      const labels = (mark: string): Record<string, string> => ({ mark, ...(processes > 1 ? { tandem_process: String(process) } : {}) });
      const at = 1_000_000 + trial * 60_000;
      const start = { experimentId: 'synthetic', trial, arm, metric: 'process_cpu_seconds', timeMs: at, value: 1, labels: labels('measure-start') };
      return [start, { ...start, timeMs: at + records * 20, value: 1 + 0.001 * records * level(arm, process), labels: labels('measure-end') }];
    }).flat(),
  );
}

export function syntheticExperiment(options: SyntheticOptions): TrialData[] {
  const random = seededRandom(options.seed);
  const z = normal(random);
  const armDraw = options.heavyTails ? studentT3(z) : z;
  const rho = options.armDriftRho ?? 0;
  const processes = options.processes ?? 1;
  // Each arm's drift state, carried from trial to trial when it is AR(1) (stationary: the same sd as fresh draws).
  const driftState = { control: armDraw(), treatment: armDraw() };
  // The corpus is the same in every trial of an experiment (it is the same recorded window).
  const cost = Array.from({ length: options.records }, () => 20 * Math.exp((options.recordSigma ?? 0.6) * z()));
  const trials: TrialData[] = [];
  for (let t = 0; t < options.trials; t++) {
    const drift = Math.exp((options.trialDrift ?? 0.05) * z());
    const slotA = 1 + (options.slotBias ?? 0);
    const treatmentInA = syntheticSlotSign(t) === 1;
    for (const arm of ['control', 'treatment'] as const)
      driftState[arm] = t === 0 ? driftState[arm] : rho * driftState[arm] + Math.sqrt(1 - rho * rho) * armDraw();
    const armFactor = {
      control: Math.max(0.05, 1 + (options.armDrift ?? 0.005) * driftState.control) * (treatmentInA ? 1 : slotA),
      treatment: Math.max(0.05, 1 + (options.armDrift ?? 0.005) * driftState.treatment) * (1 + options.shift) * (treatmentInA ? slotA : 1),
    };
    const slow = (share: number): number => (random() < share ? 1 + (options.slowdown ?? 0.2) : 1);
    const shocked = options.shock !== undefined && random() < options.shock.share ? options.shock.factor : 1;
    if (shocked !== 1) options.onShock?.(t);
    const processFactor = {
      control: Array.from({ length: processes }, () => slow(options.slowShare ?? 0)),
      treatment: Array.from({ length: processes }, () => slow(options.treatmentSlowShare ?? options.slowShare ?? 0) * shocked),
    };
    const outcomes: RequestOutcome[] = [];
    for (let r = 0; r < options.records; r++) {
      // As the replayer sends them: every record to every process of both arms.
      for (let process = 0; process < processes; process++)
        for (const arm of ['control', 'treatment'] as const) {
          const latencyMs = cost[r]! * drift * armFactor[arm] * processFactor[arm][process]! * Math.exp((options.requestSigma ?? 0.25) * z());
          const failed = random() < 0.001;
          outcomes.push({
            experimentId: 'synthetic',
            trial: t,
            attempt: 1,
            arm,
            recordId: `r${r}`,
            intendedMs: 1_000_000 + t * 60_000 + r * 20,
            latencyMs,
            status: failed ? 503 : 200,
            bytes: 500,
            errorClass: failed ? '5xx' : '',
            bodyHash: '',
            first: random() < 0.5,
            ...(processes > 1 ? { process } : {}),
          });
        }
    }
    trials.push({
      index: t,
      outcomes,
      samples:
        options.cpuSigma === undefined
          ? []
          : cpuSamples(
              t,
              options.records,
              processes,
              (arm, process) => drift * armFactor[arm] * processFactor[arm][process]! * Math.exp(options.cpuSigma! * z()),
            ),
    });
  }
  return trials;
}
