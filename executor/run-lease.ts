/**
 * Who runs an experiment right now. Two `tandem run --change C` of the same
 * change at once used to both run it: the second took the live run for an
 * orphan, resumed it, marked its trial interrupted and doubled its outcomes.
 * A runner now holds a lease, kept as `lease` events in the experiment's event
 * log (append-only in every store, so claims are ordered without a
 * compare-and-set): it claims, reads the log back, and runs only if its claim
 * is the earliest live one; it renews while running and releases at the end.
 * A runner whose process died stops renewing, its lease expires after
 * LEASE_TTL_MS, and the next runner takes the experiment over.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock, ExperimentEvent, ExperimentRecord } from '../core/index.js';
import type { Store } from '../store/index.js';
import { isTerminal } from './lifecycle.js';

export const LEASE_TTL_MS = 60_000;
const RENEW_EVERY_MS = 15_000;

/** This runner, as other runners are told about it: host, pid and a random tag. */
export function leaseHolder(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

interface LeaseData {
  readonly holder: string;
  readonly expiresAtMs: number;
  readonly claim: boolean;
}

/**
 * A lease as stored, checked: it never runs longer than LEASE_TTL_MS past when it was written, whatever it says
 * (a lease written ten years ahead had `cancel` wait 315,360,000 s for it to lapse).
 */
const leaseOf = (event: ExperimentEvent): LeaseData | undefined => {
  const data = event.data as Partial<LeaseData> | undefined;
  if (event.type !== 'lease' || typeof data?.holder !== 'string' || typeof data.expiresAtMs !== 'number' || !Number.isFinite(data.expiresAtMs))
    return undefined;
  return { holder: data.holder, expiresAtMs: Math.min(data.expiresAtMs, event.timeMs + LEASE_TTL_MS), claim: data.claim === true };
};

/** The holder of the earliest claim whose lease is still live, or undefined. */
export async function liveRunner(store: Pick<Store, 'experiments'>, id: string, clock: Clock): Promise<string | undefined> {
  const now = clock.now();
  const latest = new Map<string, { claimedAtMs: number; expiresAtMs: number }>();
  for (const event of await store.experiments.events(id, { types: ['lease'] })) {
    const lease = leaseOf(event);
    if (!lease) continue;
    const known = latest.get(lease.holder);
    // A new claim after an expiry starts a new streak; renewals extend it.
    const claimedAtMs = lease.claim || !known || known.expiresAtMs < event.timeMs ? event.timeMs : known.claimedAtMs;
    latest.set(lease.holder, { claimedAtMs, expiresAtMs: lease.expiresAtMs });
  }
  const live = [...latest.entries()].filter(([, l]) => l.expiresAtMs > now).sort(([a, x], [b, y]) => x.claimedAtMs - y.claimedAtMs || (a < b ? -1 : 1));
  return live[0]?.[0];
}

/**
 * A live runner that has stopped renewing: its last renewal is more than two renewal periods old, so its
 * process is most likely gone, though its lease has not lapsed yet. Undefined while it renews on time.
 */
export async function silentRunner(
  store: Pick<Store, 'experiments'>,
  id: string,
  clock: Clock,
): Promise<{ holder: string; silentForMs: number; lapsesAtMs: number } | undefined> {
  const holder = await liveRunner(store, id, clock);
  if (holder === undefined) return undefined;
  let last: { timeMs: number; expiresAtMs: number } | undefined;
  for (const event of await store.experiments.events(id, { types: ['lease'] })) {
    const lease = leaseOf(event);
    if (lease?.holder === holder) last = { timeMs: event.timeMs, expiresAtMs: lease.expiresAtMs };
  }
  if (last === undefined) return undefined;
  const silentForMs = clock.now() - last.timeMs;
  return silentForMs > 2 * RENEW_EVERY_MS ? { holder, silentForMs, lapsesAtMs: last.expiresAtMs } : undefined;
}

/**
 * When no runner holds the experiment: the one that did (its process died) and when its lease lapsed, or `never`
 * when no runner ever held a lease (every runner claims one before it starts: its process died before that).
 */
export async function lapsedRunner(
  store: Pick<Store, 'experiments'>,
  id: string,
  clock: Clock,
): Promise<{ holder: string; expiredAtMs: number } | 'never' | undefined> {
  if ((await liveRunner(store, id, clock)) !== undefined) return undefined;
  let last: LeaseData | undefined;
  for (const event of await store.experiments.events(id, { types: ['lease'] })) last = leaseOf(event) ?? last;
  return last === undefined ? 'never' : { holder: last.holder, expiredAtMs: last.expiresAtMs };
}

const append = (
  store: Pick<Store, 'experiments'>,
  id: string,
  clock: Clock,
  holder: string,
  expiresAtMs: number,
  claim: boolean,
  message: string,
): Promise<void> => store.experiments.appendEvent({ experimentId: id, timeMs: clock.now(), type: 'lease', message, data: { holder, expiresAtMs, claim } });

/** Claim the run; returns the runner that holds it (this one when `owner === holder`). */
export async function claimRun(store: Pick<Store, 'experiments'>, id: string, holder: string, clock: Clock): Promise<string> {
  const current = await liveRunner(store, id, clock);
  if (current !== undefined && current !== holder) return current;
  await append(store, id, clock, holder, clock.now() + LEASE_TTL_MS, true, `run by ${holder}`);
  // Read back: a runner that claimed at the same moment may be earlier in the log. Then withdraw this claim,
  // so it is not taken for the runner once the winner releases.
  const owner = (await liveRunner(store, id, clock)) ?? holder;
  if (owner !== holder) await append(store, id, clock, holder, clock.now(), false, `withdrawn by ${holder}: run by ${owner}`);
  return owner;
}

/** Renew the lease until `signal` aborts, then release it. */
export async function holdRun(store: Pick<Store, 'experiments'>, id: string, holder: string, clock: Clock, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    try {
      await clock.sleep(RENEW_EVERY_MS, signal);
    } catch {
      break;
    }
    await append(store, id, clock, holder, clock.now() + LEASE_TTL_MS, false, `still run by ${holder}`).catch(() => undefined);
  }
  await append(store, id, clock, holder, clock.now(), false, `released by ${holder}`).catch(() => undefined);
}

/**
 * Wait while another runner holds the experiment: its terminal record, or
 * undefined when the runner's lease lapsed first (it died: take the run over).
 */
export async function waitForRunner(store: Pick<Store, 'experiments'>, id: string, clock: Clock, signal?: AbortSignal): Promise<ExperimentRecord | undefined> {
  for (;;) {
    const record = await store.experiments.get(id);
    if (record && isTerminal(record.status)) return record;
    if ((await liveRunner(store, id, clock)) === undefined) return undefined;
    await clock.sleep(1_000, signal);
  }
}
