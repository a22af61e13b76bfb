/**
 * Arms warmed before their trial (`trials.prewarm`): each fresh arm is sent the trial's first recorded requests one
 * at a time, both arms at once, before the trial's paced warm-up begins. With `trials.prestart` this happens while
 * the trial before runs, on the start CPUs, so the trial itself needs a shorter warm-up.
 *
 * Beside a running trial (prestart) the records are spread over half of that trial's length rather than sent back to
 * back: two arms answering as fast as they can took the start CPUs whole, which the running trial's dependencies
 * share, and some trials missed their load. Spread out they take about a third of a CPU. The window's first second
 * still answers slower while the next arms start and warm (docs/harness.md, "Arms warmed before their trial").
 *
 * Why: a fresh runtime spends its first requests compiling and sizing its heap, and a trial's warm-up exists to let
 * it. Paced at the replay rate that takes seconds of every trial (the demo's arms: 2 s at 20 pairs/s, which is 40%
 * of its trial). The same requests sent back to back take a fraction of that, and sent to arms started early they
 * take none of the trial's time. Measured on the demo's ranking arms (docs/harness.md, "Arms warmed before their
 * trial"): after 20 requests sent so and a 1 s paced warm-up, A/A trials spread as little as after a 2 s one.
 *
 * Nothing sent here is measured or stored but how many were sent and how many failed (the trial's `prewarm`).
 * Beside a running trial it also ends when that trial's window does (`until`, trial-prewarm.ts). The requests carry the
 * trial's identity, as its own do, so the router attributes their dependency calls to the experiment.
 */
import type { Clock, CorpusRecord } from '../core/index.js';
import { ArmSenders } from './arm-senders.js';
import { instancesOf, type ArmDeployment } from './arms.js';
import type { H2SessionsOptions } from './h2-sessions.js';
import { headerBuilder, type TrialIdentity } from './paired-replay.js';
import { ARMS, type ArmName } from './schedule.js';

export interface PrewarmOptions {
  /** The records to send, in order: the trial's own, as its warm-up replays them. */
  readonly records: AsyncIterable<CorpusRecord>;
  /** Requests each process of each arm is sent. */
  readonly count: number;
  /** Every request's own timeout. */
  readonly timeoutMs: number;
  /** Time after which no further request is sent (bounded in time as well as in count). */
  readonly budgetMs: number;
  /**
   * Least time from one record's send to the next's: 0 sends back to back. Beside a running trial the warm-up is
   * spread out, so that the arms' start CPUs, which the trial's dependencies share, are not taken whole.
   */
  readonly spacingMs?: number;
  readonly identity: TrialIdentity;
  readonly clock: Clock;
  /** Cancels: what is in flight is abandoned. */
  readonly signal?: AbortSignal;
  /** Ends the prewarm early: no further record is sent, and the one in flight is answered (so `sent` is what the arms were sent). */
  readonly until?: AbortSignal;
  readonly http2?: H2SessionsOptions;
  readonly armHeaders?: Readonly<Partial<Record<ArmName, Readonly<Record<string, string>>>>>;
}

export interface PrewarmResult {
  /** Records sent to every process of both arms. */
  readonly sent: number;
  /** Requests that failed (any class), over both arms. */
  readonly errors: number;
}

/** Sends `count` records to every process of both arms, one record at a time; resolves once the last is answered. */
export async function prewarmArms(deployments: Readonly<Record<ArmName, ArmDeployment>>, options: PrewarmOptions): Promise<PrewarmResult> {
  const { clock, signal } = options;
  const startMono = clock.monotonic();
  const urls = (arm: ArmName): string[] => instancesOf(deployments[arm]).map((i) => i.url);
  // A warm-up that never ends: no outcome is ever handed on.
  const senders = new ArmSenders({
    arms: { control: urls('control'), treatment: urls('treatment') },
    concurrency: 1,
    timeoutMs: options.timeoutMs,
    clock,
    identity: options.identity,
    startMono,
    startEpoch: clock.now(),
    warmupMs: Number.POSITIVE_INFINITY,
    keepBodyBytes: 0,
    ...(options.http2 ? { http2: options.http2 } : {}),
    onOutcome: () => undefined,
  });
  const onCancel = (): void => senders.stop(signal?.reason);
  if (signal?.aborted) onCancel();
  else signal?.addEventListener('abort', onCancel, { once: true });
  const headersFor = headerBuilder(options.identity, options.armHeaders);
  // What wakes a wait for the next record's time: cancelled, or ended early.
  const wake = options.until ? AbortSignal.any([senders.signal, options.until]) : senders.signal;
  let sent = 0;
  try {
    for await (const record of options.records) {
      if (sent >= options.count || senders.signal.aborted || options.until?.aborted || clock.monotonic() - startMono >= options.budgetMs) break;
      if (record.bodyTruncated) continue;
      const headers = headersFor(record);
      const body = record.body === '' ? null : Buffer.from(record.body, 'base64');
      let now = clock.monotonic();
      const due = startMono + sent * (options.spacingMs ?? 0);
      if (due > now) {
        try {
          await clock.sleep(due - now, wake);
        } catch {
          break;
        }
        now = clock.monotonic();
        if (options.until?.aborted) break;
      }
      for (const arm of ARMS)
        for (let process = 0; process < senders.processes[arm]; process++) senders.send(arm, record, headers[arm], body, now, arm === 'control', process);
      sent++;
      await senders.drained();
    }
  } finally {
    signal?.removeEventListener('abort', onCancel);
    await senders.close();
  }
  return { sent, errors: senders.errorTotal('control') + senders.errorTotal('treatment') };
}
