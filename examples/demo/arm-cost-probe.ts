/**
 * What a request costs the demo's arms on this machine, measured before their trials so the replay rate leaves
 * them room (replay-rate.ts). Machines of one kind differ: the example's ranking took 14–16 ms of CPU per request
 * on one and 22–28 ms on a later one, where the quiet rate chosen for the first (20 pairs/s) filled the arms'
 * CPU: requests queued for hundreds of milliseconds, the latency intervals spanned ±60% and the +5% step
 * measured +4.6% with trials from +2% to +12%.
 *
 * The probe deploys both arms the way a trial does (the same deploy command, both on the arms' CPU, through
 * DeployedArms), sends each the same generated production requests at a low rate for a warm-up and a measured
 * window, and reads their CPU per answered request from /proc, as a trial's cpu_per_request does.
 */
import { Agent, request } from 'undici';
import { systemClock } from '../../core/index.js';
import { DeployedArms, processStats, type ArmDeployment } from '../../replayer/index.js';
import { rankingCorpus } from '../stack/ranking-corpus.js';

export interface ArmCostProbeOptions {
  /** The arms' deploy command, as the demo's config gives it. */
  readonly command: string;
  readonly env: Readonly<Record<string, string>>;
  /** The CPU list both arms run on (`trials.slotCpus`); none: unpinned. */
  readonly cpus?: string;
  readonly signal?: AbortSignal;
}

/** Requests per second to each arm: both together need about half their CPU at 28 ms per request, the most seen. */
const PROBE_RATE = 10;
/**
 * A trial's warm-up and window, so the probe measures what a trial measures (a fresh process's CPU per request
 * still falls for seconds after its start). Either way it is within about a tenth of what the trials that follow
 * measure, which is how much the host itself swings: a 2–3.5 s window read 28.1–28.9 ms where the trials measured
 * 26–27, and this window read 23.9 ms where they measured 26.7.
 */
const WARMUP_MS = 2_000;
const MEASURE_MS = 3_000;

/** Mean CPU seconds per answered request of the two arms over the measured window; undefined off Linux or when nothing was answered. */
export async function probeArmCost(options: ArmCostProbeOptions): Promise<number | undefined> {
  const spec = { command: options.command, env: options.env, readyPath: '/healthz', readyTimeoutMs: 30_000 };
  const arms = new DeployedArms({ specs: { control: spec, treatment: spec }, clock: systemClock, ...(options.cpus !== undefined ? { slotCpus: [options.cpus, options.cpus] as const } : {}) });
  const deployed = await arms.deploy(0, options.signal);
  const agent = new Agent({ connections: 8 });
  try {
    const processes = [deployed.control, deployed.treatment];
    const bodies = rankingCorpus(Math.ceil((PROBE_RATE * (WARMUP_MS + MEASURE_MS)) / 1_000), { seed: 7 }).map((record) => Buffer.from(record.body!, 'base64'));
    const answered = [0, 0];
    let measuring = false;
    const sent: Promise<void>[] = [];
    const startMs = systemClock.monotonic();
    let before: (number | undefined)[] = [];
    for (let i = 0; i < bodies.length; i++) {
      const dueMs = startMs + (i * 1_000) / PROBE_RATE;
      if (!measuring && dueMs >= startMs + WARMUP_MS) {
        await Promise.all(sent.splice(0));
        before = await cpuOf(processes);
        measuring = true;
      }
      await systemClock.sleep(Math.max(0, dueMs - systemClock.monotonic()), options.signal);
      const counted = measuring;
      processes.forEach((arm, side) => sent.push(post(agent, arm.url, bodies[i]!).then((ok) => void (ok && counted && answered[side]!++))));
    }
    await Promise.all(sent);
    const after = await cpuOf(processes);
    const perRequest = processes.map((_, side) => (before[side] !== undefined && after[side] !== undefined && answered[side]! > 0 ? (after[side]! - before[side]!) / answered[side]! : undefined));
    return perRequest.every((cost) => cost !== undefined) ? (perRequest[0]! + perRequest[1]!) / 2 : undefined;
  } finally {
    await agent.close();
    await Promise.all([deployed.control.stop(), deployed.treatment.stop()]);
  }
}

const cpuOf = (arms: readonly ArmDeployment[]): Promise<(number | undefined)[]> => Promise.all(arms.map(async (arm) => (arm.pid !== undefined ? (await processStats(arm.pid))?.cpuSeconds : undefined)));

/** POST /rank; true when a 2xx answer was read in full. */
async function post(agent: Agent, url: string, body: Buffer): Promise<boolean> {
  try {
    const response = await request(`${url}/rank`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent, headersTimeout: 5_000, bodyTimeout: 5_000 });
    await response.body.dump();
    return response.statusCode >= 200 && response.statusCode < 300;
  } catch {
    return false;
  }
}
