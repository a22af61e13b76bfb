import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { systemClock, type ExperimentStatus } from '../../core/index.js';
import { createLocalStore, type Store } from '../../store/index.js';
import { InlineQueue, LEASE_TTL_MS, createQueued, parseRequest, requestCancel, silentRunner, transition, type ExperimentRunner } from '../../executor/index.js';

async function tempStore(): Promise<Store> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-inline-queue-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return createLocalStore({ dir });
}

/** A runner whose experiments end when the test releases them (or when cancelled). */
function controlledRunner(): { run: ExperimentRunner; started: string[]; release: (id: string) => void; aborted: Map<string, number> } {
  const started: string[] = [];
  const releases = new Map<string, () => void>();
  const aborted = new Map<string, number>();
  const run: ExperimentRunner = (id, signal) =>
    new Promise<void>((resolve) => {
      started.push(id);
      releases.set(id, resolve);
      signal.addEventListener(
        'abort',
        () => {
          aborted.set(id, Date.now());
          resolve();
        },
        { once: true },
      );
    });
  return { run, started, release: (id) => releases.get(id)?.(), aborted };
}

const request = (workload: string, stage: string, change?: string) => parseRequest({ workload, stage, kind: 'noop', ...(change ? { change } : {}) });

async function until(condition: () => boolean, deadlineMs = 5_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not met before the deadline');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('inline queue', () => {
  it('starts experiments by lifecycle stage (diff > land > release > periodic), then in submission order', async () => {
    const store = await tempStore();
    const runner = controlledRunner();
    const queue = new InlineQueue({ store, clock: systemClock, run: runner.run, concurrency: 1 });
    onTestFinished(() => queue.close());
    const blocker = await queue.submit(request('w', 'diff', 'blocker'));
    const periodic = await queue.submit(request('w', 'periodic', 'p'));
    const release = await queue.submit(request('w', 'release', 'r'));
    const land = await queue.submit(request('w', 'land', 'l'));
    const diff = await queue.submit(request('w', 'diff', 'd'));
    expect(queue.queued).toEqual([diff.id, land.id, release.id, periodic.id]);
    for (const id of [blocker.id, diff.id, land.id, release.id]) {
      await until(() => runner.started.includes(id));
      runner.release(id);
    }
    await until(() => runner.started.length === 5);
    runner.release(periodic.id);
    await queue.idle();
    expect(runner.started).toEqual([blocker.id, diff.id, land.id, release.id, periodic.id]);
    expect((await store.experiments.get(diff.id))!.status).toBe('queued');
    expect((await store.experiments.events(diff.id)).filter((e) => e.type !== 'lease').map((e) => e.message)).toEqual(['queued']);
  });

  it('dedupes the same change, workload and stage into one experiment', async () => {
    const store = await tempStore();
    const runner = controlledRunner();
    const queue = new InlineQueue({ store, clock: systemClock, run: runner.run, concurrency: 2 });
    onTestFinished(() => queue.close());
    const first = await queue.submit(request('w', 'diff', 'D123'));
    const retry = await queue.submit(request('w', 'diff', 'D123'));
    const otherStage = await queue.submit(request('w', 'land', 'D123'));
    expect(retry).toMatchObject({ id: first.id, deduplicated: true });
    expect(first.deduplicated).toBe(false);
    expect(otherStage.id).not.toBe(first.id);
    await until(() => runner.started.length === 2);
    runner.release(first.id);
    runner.release(otherStage.id);
    await queue.idle();
    expect(runner.started.filter((id) => id === first.id)).toHaveLength(1);
  });

  it('runs a change again when its latest attempt failed or was cancelled, or on --rerun; reuses one with a verdict or still running', async () => {
    const store = await tempStore();
    // Each run ends with the status given for its experiment, as the executor would store it.
    const outcomes: ExperimentStatus[] = ['failed', 'cancelled', 'passed', 'regressed'];
    const started: string[] = [];
    const queue = new InlineQueue({
      store,
      clock: systemClock,
      run: async (id) => {
        started.push(id);
        const record = (await store.experiments.get(id))!;
        await transition(store, record, outcomes[started.length - 1] ?? 'passed', systemClock);
      },
    });
    onTestFinished(() => queue.close());
    const submitted = async (rerun = false): Promise<{ id: string; deduplicated: boolean }> => {
      const result = await queue.submit(request('w', 'diff', 'D9'), { rerun });
      await queue.idle();
      return { id: result.id, deduplicated: result.deduplicated };
    };
    const first = await submitted();
    expect(first.deduplicated).toBe(false);
    expect(await submitted()).toEqual({ id: `${first.id}-2`, deduplicated: false }); // attempt 1 failed
    expect(await submitted()).toEqual({ id: `${first.id}-3`, deduplicated: false }); // attempt 2 cancelled
    expect(await submitted()).toEqual({ id: `${first.id}-3`, deduplicated: true }); // attempt 3 passed: reused
    expect(await submitted(true)).toEqual({ id: `${first.id}-4`, deduplicated: false }); // --rerun
    expect(started).toEqual([first.id, `${first.id}-2`, `${first.id}-3`, `${first.id}-4`]);
    expect((await store.experiments.get(`${first.id}-4`))?.status).toBe('regressed');
    // Every attempt stays readable with its own outcome.
    expect(await Promise.all([first.id, `${first.id}-2`, `${first.id}-3`].map(async (id) => (await store.experiments.get(id))?.status))).toEqual([
      'failed',
      'cancelled',
      'passed',
    ]);
  });

  it('does not start a second run of a change whose attempt is still running, even on --rerun', async () => {
    const store = await tempStore();
    const runner = controlledRunner();
    const queue = new InlineQueue({ store, clock: systemClock, run: runner.run });
    onTestFinished(() => queue.close());
    const first = await queue.submit(request('w', 'diff', 'D10'));
    await until(() => runner.started.length === 1);
    expect(await queue.submit(request('w', 'diff', 'D10'), { rerun: true })).toMatchObject({ id: first.id, deduplicated: true });
    runner.release(first.id);
    await queue.idle();
    expect(runner.started).toEqual([first.id]);
  });

  it('cancels an experiment whose runner died (lease lapsed) at once; one with a live runner is only signalled', async () => {
    const store = await tempStore();
    const queue = new InlineQueue({ store, clock: systemClock, run: async () => undefined });
    onTestFinished(() => queue.close());
    const now = Date.now();
    for (const [id, expiresAtMs] of [
      ['exp-dead', now - 1_000],
      ['exp-live', now + 60_000],
    ] as const) {
      const { record } = await createQueued(store, id, request('w', 'diff'), systemClock);
      await transition(store, record, 'running', systemClock);
      await store.experiments.appendEvent({
        experimentId: id,
        timeMs: now - 2_000,
        type: 'lease',
        message: 'run by host:1:abc',
        data: { holder: 'host:1:abc', expiresAtMs, claim: true },
      });
    }
    expect(await queue.cancel('exp-dead', 'cancelled by a user')).toBe('orphan-cancelled');
    const dead = await store.experiments.get('exp-dead');
    expect(dead?.status).toBe('cancelled');
    expect(dead?.reason).toMatch(/^cancelled by a user \(its runner host:1:abc stopped renewing its lease at .*: the process is gone\)$/);
    expect(await queue.cancel('exp-live', 'cancelled by a user')).toBe('signalled');
    expect((await store.experiments.get('exp-live'))?.status).toBe('running');
  });

  it('says when a runner stopped renewing but its lease has not lapsed, never "sent" (issue 32: the user believed it done)', async () => {
    const store = await tempStore();
    let nowMs = Date.UTC(2026, 11, 2, 10);
    const clock = { ...systemClock, now: () => nowMs };
    const queue = new InlineQueue({ store, clock, run: async () => undefined });
    onTestFinished(() => queue.close());
    const { record } = await createQueued(store, 'exp-killed', request('w', 'diff'), clock);
    await transition(store, record, 'running', clock);
    // Claimed with a 60 s lease, then killed: no renewal follows.
    await store.experiments.appendEvent({
      experimentId: 'exp-killed',
      timeMs: nowMs,
      type: 'lease',
      message: 'run by host:2:def',
      data: { holder: 'host:2:def', expiresAtMs: nowMs + 60_000, claim: true },
    });
    nowMs += 10_000; // within one renewal period: the runner may simply be about to renew
    expect(await queue.cancel('exp-killed', 'by ann')).toBe('signalled');
    nowMs += 30_000; // 40 s without a renewal: most likely dead, lease still live
    expect(await queue.cancel('exp-killed', 'by ann')).toBe('runner-silent');
    expect((await store.experiments.get('exp-killed'))?.status).toBe('running');
    nowMs += 21_000; // the lease lapsed: the cancel finishes here
    expect(await queue.cancel('exp-killed', 'by ann')).toBe('orphan-cancelled');
    expect((await store.experiments.get('exp-killed'))?.status).toBe('cancelled');
  });

  it('cancels a running experiment no runner ever held a lease on (a crashed `tandem replay`, issue 70 finding 6), and trusts no lease past its TTL', async () => {
    const store = await tempStore();
    let nowMs = Date.UTC(2026, 11, 7, 10);
    const clock = { ...systemClock, now: () => nowMs };
    const queue = new InlineQueue({ store, clock, run: async () => undefined });
    onTestFinished(() => queue.close());
    const { record } = await createQueued(store, 'exp-replayed', request('w', 'diff'), clock);
    await transition(store, record, 'running', clock);
    // Before: "cancel sent to its runner, which is renewing its lease", and the experiment stayed running forever.
    expect(await queue.cancel('exp-replayed', 'by ann')).toBe('orphan-cancelled');
    expect(await store.experiments.get('exp-replayed')).toMatchObject({
      status: 'cancelled',
      reason: 'by ann (no runner holds a lease on it: the process that ran it is gone)',
    });
    // A lease written to expire in ten years lapses LEASE_TTL_MS after it was written, like any other.
    const { record: far } = await createQueued(store, 'exp-far', request('w', 'diff'), clock);
    await transition(store, far, 'running', clock);
    await store.experiments.appendEvent({
      experimentId: 'exp-far',
      timeMs: nowMs,
      type: 'lease',
      message: 'run by host:3:aaa',
      data: { holder: 'host:3:aaa', expiresAtMs: nowMs + 10 * 365 * 86_400_000, claim: true },
    });
    nowMs += 40_000;
    expect(await queue.cancel('exp-far', 'by ann')).toBe('runner-silent');
    expect((await silentRunner(store, 'exp-far', clock))?.lapsesAtMs).toBe(nowMs - 40_000 + LEASE_TTL_MS);
    nowMs += 21_000;
    expect(await queue.cancel('exp-far', 'by ann')).toBe('orphan-cancelled');
  });

  it('holds a workload to its concurrency limit while others run', async () => {
    const store = await tempStore();
    const runner = controlledRunner();
    const queue = new InlineQueue({ store, clock: systemClock, run: runner.run, concurrency: 3, workloadLimits: new Map([['gpu', 1]]) });
    onTestFinished(() => queue.close());
    const a = await queue.submit(request('gpu', 'diff', 'a'));
    const b = await queue.submit(request('gpu', 'diff', 'b'));
    const c = await queue.submit(request('cpu', 'diff', 'c'));
    await until(() => runner.started.length === 2);
    expect(runner.started).toEqual([a.id, c.id]);
    runner.release(a.id);
    await until(() => runner.started.includes(b.id));
    runner.release(b.id);
    runner.release(c.id);
    await queue.idle();
  });

  it('cancels: a queued experiment is removed; a running one is stopped, also from another process through the store', async () => {
    const store = await tempStore();
    const runner = controlledRunner();
    const queue = new InlineQueue({ store, clock: systemClock, run: runner.run, concurrency: 1 });
    onTestFinished(() => queue.close());
    const running = await queue.submit(request('w', 'diff', 'run'));
    const queued = await queue.submit(request('w', 'diff', 'queued'));
    await until(() => runner.started.includes(running.id));
    expect(await queue.cancel(queued.id, 'not needed')).toBe('removed');
    expect(await store.experiments.get(queued.id)).toMatchObject({ status: 'cancelled', reason: 'not needed' });
    // Another process only has the store: its cancel request reaches this queue's watcher.
    await requestCancel(store, running.id, 'from elsewhere', systemClock);
    await until(() => runner.aborted.has(running.id), 30_000);
    await queue.idle();
    expect(runner.started).not.toContain(queued.id);
    expect(await queue.cancel('nope', 'x')).toBe('unknown');
  });
});
