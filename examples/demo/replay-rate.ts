/**
 * How hard the demo replays: its trials' pairs per second, chosen from how idle the machine is before they start.
 * Both arms run on one CPU (armCpusOf), so the rate decides how much room they leave each other and whatever else
 * the machine runs (docs/harness.md, "On a busy machine, leave the arms' CPU room").
 */
import { quantileOf } from '../../harness/index.js';
import { cpuTimesOf, cpusOfList } from '../../replayer/index.js';

/** The CPUs this process may run on (`Cpus_allowed_list` in /proc/self/status: a container's cpuset is respected). */
export function allowedCpusOf(procStatus: string): number[] {
  const list = /^Cpus_allowed_list:\s*([\d,-]+)\s*$/m.exec(procStatus)?.[1];
  return list ? cpusOfList(list) : [];
}

/**
 * How many of the given CPUs stood idle between two reads of /proc/stat: for each, the share of its time spent
 * idle or waiting for I/O, summed. Undefined when a read lacks one of them.
 */
export function idleCpusBetween(before: string, after: string, cpus: readonly number[]): number | undefined {
  let idle = 0;
  for (const cpu of cpus) {
    const a = cpuTimesOf(before, cpu);
    const b = cpuTimesOf(after, cpu);
    if (!a || !b || !(b.total > a.total)) return undefined;
    idle += 1 - (b.busy - a.busy) / (b.total - a.total);
  }
  return idle;
}

/**
 * Pairs per second for the demo's trials on a quiet machine and on one where other work keeps half a CPU or more
 * busy. Both arms share one CPU: the rates keep them at about three fifths and two fifths of it (about 14–16 ms of
 * CPU per request each since the example's crossing doubled, 2026-12-03; 30 and 20 pairs/s before, at about 9–11 ms).
 * With other work on that CPU, arms that need most of it fall behind, requests queue and are answered in bursts,
 * and two processes do not burst alike: with one core kept busy the paired sd was 2.4–2.5% at two thirds of the
 * CPU and 1.25–1.8% at under half. On a quiet machine the higher rate decides sooner (more requests per window):
 * the clean change passed after 6–7 trials at 30 pairs/s, 10–26 at 20 (docs/harness.md, "On a busy machine").
 */
export const QUIET_MACHINE_RATE = 20;
export const BUSY_MACHINE_RATE = 14;

/** Whether the machine is quiet by the CPUs idle before the trials (idleCpusBetween): all but at most half a CPU stood idle, or unknown. */
export function isQuietMachine(idleCpus: number | undefined, cpuCount: number): boolean {
  return idleCpus === undefined || idleCpus >= cpuCount - 0.5;
}

/**
 * The most of their one CPU both arms may be asked for, at the cost the probe read. Quiet: two thirds. Asked for
 * more than their CPU, arms fall behind: at about 40 ms a request, 20 pairs/s asked for 1.6 CPUs, achieved about
 * 10 and failed the replayer's achieved-rate check in every trial. All of it would be the rate that measures best
 * (on a host where a request cost 24–28 ms, 20 pairs/s asked for about all of it and its trials were the least
 * noisy the demo has had, sd 0.5%), but the probe's reading is not that exact: the same host read 40.1 ms and
 * 25.7 ms in two runs, and at all of its CPU the 25.7 ms run's trials achieved 11–15 of 19 pairs/s and failed.
 * Two thirds leaves room for a reading half the true cost. Busy: half, where with other work on the CPU the paired
 * sd was 1.25–1.8% against 2.4–2.5% at two thirds (the rates above).
 */
export const QUIET_ARMS_CPU_SHARE = 2 / 3;
export const BUSY_ARMS_CPU_SHARE = 1 / 2;
/** The floor of the demo's rates: below it a trial's window would need over ten seconds to hold WINDOW_REQUESTS. */
export const MIN_DEMO_RATE = 4;

/**
 * Requests per arm a trial's window holds at least about: the busy rate's 3 s. A window's CPU per request averages
 * over its requests (and the GC pauses among them), so at a lower rate the window grows rather than measuring fewer:
 * with too few requests a window is too noisy for a clean change to be decided within the demo's 48 trials.
 */
export const WINDOW_REQUESTS = BUSY_MACHINE_RATE * 3;

/**
 * A trial's measured seconds at this rate: `minSeconds`, or longer at low rates so the window holds about
 * WINDOW_REQUESTS, rounded down so a trial replays at most `rate` + WINDOW_REQUESTS records with a 1 s warm-up (the
 * recording holds four seconds of the busy rate or more).
 */
export function measureSecondsAt(rate: number, minSeconds: number): number {
  if (!(rate > 0)) return minSeconds;
  return Math.max(minSeconds, Math.floor(WINDOW_REQUESTS / rate));
}

/**
 * The rate after a judged step's trials failed their load (the replayer replaced every attempt that achieved less
 * than minAchievedShare of the rate, and the experiment failed when the replacements ran out). Overloaded arms
 * answer as fast as their CPU lets them, so the median achieved rate is about what both can do with all of it here:
 * the rate keeps the machine's share of that (two thirds quiet, half busy), below the failed rate and at least the
 * floor. The cost read before the trials can be low: on one host the probe read 23.6–40.1 ms where the arms, fresh
 * processes sharing one CPU, cost 40–50 ms, and a run at the 23.6 ms reading's 14 pairs/s achieved 8.0–10.7.
 * Never above `machineRate`, the rate the demo would choose here by itself (rateForRequestCost): a rate asked for
 * with --rate that failed falls back to at most that one. In CI, 100 pairs/s asked for failed, its trials achieved a
 * median of 39, and two thirds of it, 26, failed too (20.0–20.7 achieved in 5 trials): arms answering as fast as they
 * can keep other work off their CPU, and at a rate they hold that work comes back (a fifth to a third of the CPU
 * since the next trial's arms warm beside the running one, trials.prewarm).
 * Undefined when no attempt failed its load or the rate is already the floor.
 */
export function rateAfterLoadFailure(quiet: boolean, failedRate: number, achievedRates: readonly number[], machineRate: number): number | undefined {
  const achieved = achievedRates.filter((r) => Number.isFinite(r) && r >= 0);
  if (achieved.length === 0 || failedRate <= MIN_DEMO_RATE) return undefined;
  const median = quantileOf(achieved, 0.5);
  const share = quiet ? QUIET_ARMS_CPU_SHARE : BUSY_ARMS_CPU_SHARE;
  return Math.max(MIN_DEMO_RATE, Math.min(failedRate - 1, machineRate, Math.floor(median * share)));
}

/**
 * The rate for a quiet or busy machine (isQuietMachine), lowered where a request costs more than it assumes
 * (request-cost.ts), so that both arms are asked for at most their share of one CPU: at up to 16 ms a request the
 * quiet rate stands and at up to 17 ms the busy one; at 40 ms they are 8 and 6. Never raised: the recording is
 * sized for the rate chosen before the cost is known. Unknown cost: the rate as chosen.
 */
export function rateForRequestCost(quiet: boolean, cpuSecondsPerRequest: number | undefined): number {
  const rate = quiet ? QUIET_MACHINE_RATE : BUSY_MACHINE_RATE;
  if (cpuSecondsPerRequest === undefined || !(cpuSecondsPerRequest > 0)) return rate;
  const share = quiet ? QUIET_ARMS_CPU_SHARE : BUSY_ARMS_CPU_SHARE;
  return Math.max(MIN_DEMO_RATE, Math.min(rate, Math.floor(share / (2 * cpuSecondsPerRequest))));
}
