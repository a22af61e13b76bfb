/**
 * The dependency monitor loop of FIRE Figure 3. Every detector is primed at
 * start (it captures its baseline) and then runs on its own schedule: checks
 * before its warm-up are skipped, it retires after warm-up + maxDuration, a
 * violation increments its count and a clear check resets it, and reaching
 * `consecutive` cancels the experiment. A check that cannot be read (source
 * down, no data, NaN) is an *error*, kept apart from violations: it neither
 * increments nor resets the count, and `maxErrors` of them in a row cancel
 * the experiment as "monitoring unavailable" when the detector says so —
 * "no data" is never silently a pass.
 */
import { ConfigError, ExperimentCancelledError, type Clock, type DetectorConfig, type DetectorObservation } from '../core/index.js';

export type CheckVerdict = 'clear' | 'violation' | 'error';

export interface CheckResult {
  readonly verdict: CheckVerdict;
  readonly value: number | null;
  readonly baseline: number | null;
  readonly message?: string;
}

/** One detector: its schedule and how to read it. */
export interface Detector {
  readonly name: string;
  readonly warmupMs: number;
  readonly intervalMs: number;
  readonly consecutive: number;
  readonly maxDurationMs: number;
  readonly maxErrors: number;
  /** What `maxErrors` unreadable checks in a row do. */
  readonly onUnavailable: 'cancel' | 'ignore';
  /** Capture the baseline; called once when monitoring starts. */
  prime(): Promise<void>;
  check(): Promise<CheckResult>;
}

/** A detector's schedule from its config (durations already in ms). */
export function scheduleOf(
  config: DetectorConfig,
): Pick<Detector, 'name' | 'warmupMs' | 'intervalMs' | 'consecutive' | 'maxDurationMs' | 'maxErrors' | 'onUnavailable'> {
  return {
    name: config.name,
    warmupMs: config.warmup,
    intervalMs: config.interval,
    consecutive: config.consecutive,
    maxDurationMs: config.maxDuration,
    maxErrors: config.maxErrors,
    onUnavailable: config.onUnavailable,
  };
}

/** Why a monitor cancelled an experiment. */
export interface Cancellation {
  readonly detector: string;
  readonly reason: string;
  /** When this detector's current run of violations (or errors) began, epoch ms. */
  readonly firstViolationMs: number;
  readonly terminatedMs: number;
}

export interface MonitorOptions {
  readonly experimentId: string;
  readonly detectors: readonly Detector[];
  readonly clock: Clock;
  /** Aborted with an ExperimentCancelledError when a detector cancels; abort it to stop monitoring. */
  readonly controller: AbortController;
  /** Every check, skipped ones included. */
  readonly onObservation?: (observation: DetectorObservation) => void;
}

interface DetectorState {
  readonly detector: Detector;
  nextDueMs: number;
  violations: number;
  errors: number;
  firstBadMs: number;
  retired: boolean;
}

/**
 * Run the monitor until every detector retires, the experiment is cancelled by
 * a detector (resolves with the cancellation, after aborting the controller),
 * or the controller is aborted from outside (resolves with undefined).
 */
export async function runMonitor(options: MonitorOptions): Promise<Cancellation | undefined> {
  const { clock, controller } = options;
  const signal = controller.signal;
  const startMs = clock.now();
  const observe = (
    detector: string,
    result: { verdict: DetectorObservation['verdict']; value: number | null; baseline: number | null; message?: string },
  ): void => options.onObservation?.({ experimentId: options.experimentId, detector, timeMs: clock.now(), ...result });

  const states: DetectorState[] = [];
  let misconfigured: { name: string; message: string } | undefined;
  for (const detector of options.detectors) {
    try {
      await detector.prime();
    } catch (error) {
      observe(detector.name, { verdict: 'error', value: null, baseline: null, message: `prime failed: ${(error as Error).message}` });
      // A source that answers in another format will never be readable: said at once, as configuration.
      if (error instanceof ConfigError && misconfigured === undefined) misconfigured = { name: detector.name, message: error.issues.join('; ') };
    }
    states.push({ detector, nextDueMs: startMs + detector.intervalMs, violations: 0, errors: 0, firstBadMs: 0, retired: false });
  }

  const cancel = (state: DetectorState, reason: string): Cancellation => {
    const cancellation: Cancellation = { detector: state.detector.name, reason, firstViolationMs: state.firstBadMs, terminatedMs: clock.now() };
    controller.abort(new ExperimentCancelledError(`cancelled by detector ${state.detector.name}: ${reason}`));
    return cancellation;
  };
  if (misconfigured !== undefined) {
    const state = states.find((st) => st.detector.name === misconfigured!.name)!;
    state.firstBadMs = clock.now();
    return cancel(state, `configuration: ${misconfigured.message}`);
  }

  while (!signal.aborted) {
    const live = states.filter((s) => !s.retired);
    if (live.length === 0) return undefined;
    // Sleep until the next detector is due; schedules are independent per detector.
    const nextMs = Math.min(...live.map((s) => s.nextDueMs));
    try {
      await clock.sleep(Math.max(0, nextMs - clock.now()), signal);
    } catch {
      return undefined;
    }
    const now = clock.now();
    for (const state of live) {
      if (state.nextDueMs > now || signal.aborted) continue;
      const { detector } = state;
      state.nextDueMs += detector.intervalMs;
      const elapsed = now - startMs;
      if (elapsed < detector.warmupMs) {
        observe(detector.name, { verdict: 'skipped', value: null, baseline: null, message: 'warm-up' });
        continue;
      }
      if (elapsed > detector.warmupMs + detector.maxDurationMs) {
        state.retired = true;
        continue;
      }
      let result: CheckResult;
      try {
        result = await detector.check();
      } catch (error) {
        result = { verdict: 'error', value: null, baseline: null, message: (error as Error).message };
      }
      if (signal.aborted) return undefined;
      if (result.verdict !== 'error' && (result.value === null || Number.isNaN(result.value))) {
        result = { ...result, verdict: 'error', message: result.message ?? 'no data' };
      }
      observe(detector.name, result);
      if (result.verdict === 'error') {
        if (state.errors === 0 && state.violations === 0) state.firstBadMs = clock.now();
        state.errors++;
        if (state.errors >= detector.maxErrors && detector.onUnavailable === 'cancel') {
          return cancel(state, `monitoring unavailable: ${state.errors} checks in a row could not be read (${result.message ?? 'no data'})`);
        }
        continue; // neither increments nor resets the violation count
      }
      state.errors = 0;
      if (result.verdict === 'violation') {
        if (state.violations === 0) state.firstBadMs = clock.now();
        state.violations++;
        if (state.violations >= detector.consecutive) {
          return cancel(
            state,
            `${state.violations} violations in a row (value ${result.value}, baseline ${result.baseline})${result.message ? `: ${result.message}` : ''}`,
          );
        }
      } else {
        // FIRE §4.2: a clear check resets the count.
        state.violations = 0;
      }
    }
  }
  return undefined;
}
