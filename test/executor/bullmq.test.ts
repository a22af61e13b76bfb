import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { loadConfig, systemClock, type ExperimentRecord } from '../../core/index.js';
import { createStore, type Store } from '../../store/index.js';
import { isTerminal, parseRequest, type ExperimentRequestInput } from '../../executor/index.js';
import { BullMqQueue } from '../../executor/bullmq-queue.js';
import { simpleCorpus } from '../support/corpus.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { jsonService } from '../support/json-service.js';
import { killHard } from '../support/child.js';

const redisUrl = inject('redisUrl');
const clickhouseUrl = inject('clickhouseUrl');

interface Project {
  readonly dir: string;
  readonly store: Store;
  readonly queue: BullMqQueue;
}

/** ClickHouse store and a BullMQ queue of their own; verdicts decided by the error share only (not by timing). */
async function project(): Promise<Project> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bullmq-'));
  const suffix = randomBytes(4).toString('hex');
  await writeFile(
    join(dir, 'tandem.config.yaml'),
    [
      `store: { kind: clickhouse, url: "${clickhouseUrl}", database: t_exec_${suffix} }`,
      `queue: { kind: bullmq, redisUrl: "${redisUrl}", prefix: t${suffix}, concurrency: 2, lockDuration: 2s, stalledInterval: 1s }`,
      'workloads:',
      '  - name: svc',
      '    tier: svc',
      // Several experiments replay at once on a small CI machine: the share of the rate they reach varies.
      '    replay: { rate: 60, concurrency: 16, timeout: 5s, minAchievedShare: 0.2 }',
      // Eight trials: sign flips give at least 2/2ⁿ, which Benjamini–Hochberg multiplies by the judged metrics (3 here): 2/2⁸ × 3 < 0.05 (harness/judge/sign-flip.ts).
      '    trials: { count: 8, warmup: 50ms, measure: 400ms }',
      // Only errors decide (thresholds of 1000% on timing): fifty experiments share two cores.
      '    checks:',
      '      - { metric: latency_shift, critical: false, threshold: 10 }',
      '      - { metric: latency_p99, critical: false, threshold: 10 }',
      '    harness: { minPoints: 20 }',
      '',
    ].join('\n'),
  );
  const { config } = await loadConfig({ cwd: dir });
  const store = createStore(config.store, { cwd: dir });
  await store.init();
  await store.corpus.append(simpleCorpus(2_000));
  const queue = new BullMqQueue({ redisUrl, prefix: `t${suffix}`, store, clock: systemClock });
  onTestFinished(async () => {
    await queue.queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  return { dir, store, queue };
}

/** A `tandem worker` process; resolves once it is taking jobs. Killed when the test ends. */
async function startWorker(dir: string, concurrency: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'tandem.js'), 'worker', '--concurrency', String(concurrency)], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onTestFinished(() => killHard(child));
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`worker not ready within 30 s: ${stderr}`)), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('"worker":"ready"')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code}: ${stderr}`));
    });
  });
  return child;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, deadlineMs: number, what: string): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > end) throw new Error(`${what}: not reached within ${deadlineMs} ms (last: ${JSON.stringify(value).slice(0, 500)})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const submit = (queue: BullMqQueue, input: ExperimentRequestInput) => queue.submit(parseRequest(input));

describe('BullMQ executor (real Redis, worker processes)', () => {
  it('runs 50 experiments on 3 workers to the right verdicts, deduping resubmissions', { timeout: 180_000 }, async () => {
    const { dir, store, queue } = await project();
    const clean = await jsonService();
    const failing = await jsonService({ failEvery: 5 });
    const ids: { id: string; expected: 'passed' | 'regressed' }[] = [];
    for (let i = 0; i < 50; i++) {
      const regress = i % 2 === 1;
      const { id } = await submit(queue, { workload: 'svc', change: `C${i}`, control: clean, treatment: regress ? failing : clean });
      ids.push({ id, expected: regress ? 'regressed' : 'passed' });
    }
    // A CI retry of the same change: the same experiment, no second job.
    const retry = await runCli(['submit', 'svc', '--change', 'C7', '--control', clean, '--treatment', failing, '--json'], { cwd: dir });
    expect(JSON.parse(retry.out)).toMatchObject({ id: ids[7]!.id, deduplicated: true });
    expect(await queue.queue.count()).toBe(50);
    await Promise.all([startWorker(dir, 1), startWorker(dir, 1), startWorker(dir, 1)]);
    const records = await until(
      () => Promise.all(ids.map(({ id }) => store.experiments.get(id))),
      (all) => all.every((r) => r !== undefined && isTerminal(r.status)),
      150_000,
      '50 experiments finished',
    );
    expect(
      records.map((r) => r!.status),
      records.map((r) => `${r!.id} ${r!.status}: ${r!.reason ?? ''}`).join('\n'),
    ).toEqual(ids.map((i) => i.expected));
    const runners = new Set<string>();
    for (const { id } of ids)
      for (const e of await store.experiments.events(id)) if (e.message === 'running' && e.data?.runner) runners.add(String(e.data.runner));
    expect(runners.size).toBe(3);
  });

  it(
    'survives a worker killed with SIGKILL mid-trial: completed trials kept, the interrupted one replaced, the experiment finished',
    { timeout: 120_000 },
    async () => {
      const { dir, store, queue } = await project();
      const clean = await jsonService();
      const first = await startWorker(dir, 1);
      // Eight trials: what the sign flips need to decide at α = 0.05 over three judged metrics.
      const { id } = await submit(queue, { workload: 'svc', change: 'crash', control: clean, treatment: clean, overrides: { trials: 8, measureMs: 1_000 } });
      await until(
        () => store.experiments.get(id),
        (r) => (r?.trials ?? []).some((t) => t.index >= 1 && t.status === 'running'),
        60_000,
        'second trial running',
      );
      await killHard(first);
      await startWorker(dir, 1);
      const record = (await until(
        () => store.experiments.get(id),
        (r) => r !== undefined && isTerminal(r.status),
        90_000,
        'resumed experiment finished',
      )) as ExperimentRecord;
      expect(record.status).toBe('passed');
      const completed = record.trials.filter((t) => t.status === 'completed');
      expect(completed.map((t) => t.index).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(completed.find((t) => t.index === 0)!.attempt).toBe(1);
      const interrupted = record.trials.filter((t) => t.status === 'replaced');
      expect(interrupted).toHaveLength(1);
      expect(interrupted[0]!.reason).toMatch(/^interrupted: the worker running this trial stopped/);
      const running = (await store.experiments.events(id)).filter((e) => e.message === 'running');
      expect(running).toHaveLength(2);
      expect(String(running[1]!.data?.reason)).toMatch(/resumed with \d completed trial/);
    },
  );

  it('stops a running experiment on `tandem cancel` from another process', { timeout: 60_000 }, async () => {
    const { dir, store, queue } = await project();
    const clean = await jsonService();
    await startWorker(dir, 1);
    const { id } = await submit(queue, { workload: 'svc', change: 'cancel-me', control: clean, treatment: clean, overrides: { trials: 20, measureMs: 1_000 } });
    await until(
      () => store.experiments.get(id),
      (r) => (r?.trials ?? []).some((t) => t.status === 'running'),
      30_000,
      'experiment running',
    );
    const cancel = await runCli(['cancel', id, '--reason', 'superseded'], { cwd: dir });
    expect(cancel.out).toMatch(/cancel sent to its runner/);
    const record = await until(
      () => store.experiments.get(id),
      (r) => r?.status === 'cancelled',
      10_000,
      'cancelled',
    );
    // The record and its status event are two writes (the record first, then the event, by the worker's process):
    // a reader in another process may see the cancelled record a moment before the event.
    await until(
      () => store.experiments.events(id, { types: ['status'] }),
      (events) => events.some((e) => e.message === 'cancelled'),
      10_000,
      'cancelled event',
    );
    // Stopped, not run out: 20 trials of a second each were scheduled (how fast is the executor bench's figure).
    expect(record!.trials.filter((t) => t.status === 'completed').length).toBeLessThan(20);
    const waited = await runCli(['wait', id], { cwd: dir });
    expect(waited.code).toBe(2);
  });

  it('orders the queue by lifecycle stage: diff, land, release, periodic', { timeout: 60_000 }, async () => {
    const { dir, store, queue } = await project();
    const order = ['periodic', 'release', 'land', 'diff'] as const;
    const ids = new Map<string, string>();
    for (const stage of order) ids.set(stage, (await submit(queue, { workload: 'svc', stage, kind: 'noop', change: `noop-${stage}` })).id);
    // Queued before any worker: cancel removes it at once.
    const dropped = await submit(queue, { workload: 'svc', stage: 'diff', kind: 'noop', change: 'dropped' });
    expect(await queue.cancel(dropped.id, 'not needed')).toBe('removed');
    await startWorker(dir, 1);
    await until(
      () => Promise.all([...ids.values()].map((id) => store.experiments.get(id))),
      (all) => all.every((r) => r?.status === 'passed'),
      30_000,
      'noop experiments passed',
    );
    const startedAt = async (id: string): Promise<number> => (await store.experiments.events(id)).find((e) => e.message === 'running')!.timeMs;
    const starts = await Promise.all(['diff', 'land', 'release', 'periodic'].map(async (stage) => startedAt(ids.get(stage)!)));
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    expect((await store.experiments.get(dropped.id))!.status).toBe('cancelled');
  });
});
