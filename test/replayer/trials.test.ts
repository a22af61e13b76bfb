import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it, onTestFinished } from 'vitest';
import { freePort, parseConfig, systemClock, type RequestOutcome, type Sample, type TrialRecord, type WorkloadConfig } from '../../core/index.js';
import { createLocalStore, type Store } from '../../store/index.js';
import {
  DeployedArms,
  FINGERPRINT_PATH,
  ReplayFailedError,
  UrlArms,
  cpusOfList,
  deployCommand,
  localFingerprint,
  runTrials,
  type RecordedProcess,
} from '../../replayer/index.js';
import { simpleCorpus, stream } from '../support/corpus.js';

async function tempStore(): Promise<Store> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-trials-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return createLocalStore({ dir });
}

function workload(trials: Record<string, unknown> = {}, replay: Record<string, unknown> = {}): WorkloadConfig {
  // Windows of a few hundred milliseconds on a busy machine: load is not what these tests are about (but see the load test).
  return parseConfig({
    workloads: [
      {
        name: 'w',
        tier: 'svc',
        replay: { rate: 100, concurrency: 16, timeout: '2s', minAchievedShare: 0.2, ...replay },
        trials: { count: 2, warmup: '50ms', measure: '150ms', maxReplacements: 2, ...trials },
      },
    ],
  }).workloads[0]!;
}

async function server(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const s = createServer(handler).listen(0, '127.0.0.1');
  await once(s, 'listening');
  onTestFinished(() => {
    s.closeAllConnections();
    return new Promise<void>((resolve) => s.close(() => resolve()));
  });
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const ARM_SERVER = join(import.meta.dirname, 'fixtures', 'arm-server.ts');

/** Arms on the last CPU this process may use, started on the first (as the demo places them; one CPU: the same). */
function pinning(): { slotCpus: [string, string]; startCpus: [string, string] } {
  const allowed = cpusOfList(/^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]!);
  const [first, last] = [String(allowed[0]), String(allowed.at(-1))];
  return { slotCpus: [last, last], startCpus: [first, first] };
}

describe('trials', () => {
  it('runs deployed arms per trial, swapping their slots (crossover), and records counters and CPU per arm', async () => {
    const store = await tempStore();
    const spec = { command: `${process.execPath} --import tsx ${ARM_SERVER} {revision}`, readyPath: '/healthz', readyTimeoutMs: 20_000, cwd: process.cwd() };
    const arms = new DeployedArms({ specs: { control: spec, treatment: spec }, revisions: { control: 'abc', treatment: 'def' }, clock: systemClock });
    const persisted: string[] = [];
    const result = await runTrials({
      experimentId: 'exp-x',
      seed: 9,
      workload: workload(),
      corpus: () => stream(simpleCorpus(50)),
      arms,
      store,
      clock: systemClock,
      scrapeIntervalMs: 50,
      onTrials: (t) => void persisted.push(t.map((x) => x.status).join(',')),
    });
    expect(result.completed).toBe(2);
    expect(result.trials.map((t) => [t.index, t.status, t.details?.slots])).toEqual([
      [0, 'completed', { control: 'A', treatment: 'B' }],
      [1, 'completed', { control: 'B', treatment: 'A' }],
    ]);
    // Each attempt is stored as running when it starts, so a crash leaves a record of it.
    // Each attempt is stored running when it starts and again once its arms' processes are known (a crash then leaves them recorded).
    expect(persisted).toEqual(['running', 'running', 'completed', 'completed,running', 'completed,running', 'completed,completed']);
    const outcomes: RequestOutcome[] = await collect(store.outcomes.read('exp-x'));
    expect(new Set(outcomes.map((o) => o.trial))).toEqual(new Set([0, 1]));
    const samples: Sample[] = await collect(store.samples.read('exp-x'));
    for (const arm of ['control', 'treatment']) {
      expect(samples.some((s) => s.arm === arm && s.metric === 'process_cpu_seconds')).toBe(true);
      expect(samples.some((s) => s.arm === arm && s.metric === 'process_rss_bytes' && s.value > 1_000_000)).toBe(true);
    }
    // Each arm's own /metrics, labelled with the slot it ran in: control was in A, then in B.
    const controlSlots = samples.filter((s) => s.arm === 'control' && s.metric === 'arm_requests_total').map((s) => `${s.trial}:${s.labels?.slot}`);
    expect(new Set(controlSlots)).toEqual(new Set(['0:A', '1:B']));
  });

  it("measures the share of the arms' CPUs other work took in each window when the arms are pinned, and nothing when they are not", async () => {
    const store = await tempStore();
    const spec = { command: `${process.execPath} --import tsx ${ARM_SERVER} {revision}`, readyPath: '/healthz', readyTimeoutMs: 20_000, cwd: process.cwd() };
    // Both arms on one CPU this process may use (slotCpus alike), as the demo pins them.
    const cpu = String(cpusOfList(/^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]!)[0]);
    const arms = new DeployedArms({ specs: { control: spec, treatment: spec }, slotCpus: [cpu, cpu], clock: systemClock });
    const pinned = await runTrials({
      experimentId: 'exp-p',
      seed: 3,
      workload: workload({ count: 1, slotCpus: [cpu, cpu] }),
      corpus: () => stream(simpleCorpus(50)),
      arms,
      store,
      clock: systemClock,
      scrapeIntervalMs: 50,
    });
    const share = pinned.trials[0]?.details?.otherWorkOnArmCpus;
    expect(typeof share).toBe('number');
    expect(share).toBeGreaterThanOrEqual(0);
    expect(share).toBeLessThanOrEqual(1);
    const free = new DeployedArms({ specs: { control: spec, treatment: spec }, clock: systemClock });
    const unpinned = await runTrials({
      experimentId: 'exp-u',
      seed: 3,
      workload: workload({ count: 1 }),
      corpus: () => stream(simpleCorpus(50)),
      arms: free,
      store,
      clock: systemClock,
      scrapeIntervalMs: 50,
    });
    expect(unpinned.trials[0]?.details).not.toHaveProperty('otherWorkOnArmCpus');
  });

  it("gives every process of a compound deploy command its slot's CPUs, not only the first", async () => {
    const allowed = cpusOfList(/^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]!);
    const cpu = String(allowed.at(-1));
    // A helper started beside the server, as a wrapper script might; the server is the arm's measured process.
    const spec = {
      command: `sleep 30 & exec ${process.execPath} --import tsx ${ARM_SERVER} {revision}`,
      readyPath: '/healthz',
      readyTimeoutMs: 20_000,
      cwd: process.cwd(),
    };
    const arms = new DeployedArms({ specs: { control: spec, treatment: spec }, slotCpus: [cpu, cpu], clock: systemClock });
    const deployed = await arms.deploy(0);
    onTestFinished(async () => void (await Promise.all([deployed.control.stop(), deployed.treatment.stop()])));
    const placement = (await (await request(`${deployed.control.url}/placement`)).body.json()) as { pid: number; cpus: string[] };
    expect(placement).toMatchObject({ pid: deployed.control.pid, cpus: [cpu] });
    // The helper, in the arm's process group, too.
    const group = readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== deployed.control.pid)
      .filter((entry) => {
        try {
          const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === deployed.control.pid;
        } catch {
          return false;
        }
      });
    expect(group.map((pid) => /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])).toEqual([cpu]);
  });

  it("deploys control′ per trial when the workload asks: control's command and revision, its own arm name, no slot", async () => {
    const store = await tempStore();
    const spec = { command: `${process.execPath} --import tsx ${ARM_SERVER} {revision}`, readyPath: '/healthz', readyTimeoutMs: 20_000, cwd: process.cwd() };
    const arms = new DeployedArms({
      specs: { control: spec, treatment: spec },
      revisions: { control: 'abc', treatment: 'def' },
      controlPrime: {},
      clock: systemClock,
    });
    const deploy = { command: 'unused (the arms above are given)' };
    const configured = parseConfig({
      workloads: [
        {
          name: 'w',
          tier: 'svc',
          arms: { control: { deploy }, treatment: { deploy }, controlPrime: { deployed: true } },
          replay: { rate: 100, concurrency: 16, timeout: '2s', minAchievedShare: 0.2, compareResponses: true },
          trials: { count: 1, warmup: '50ms', measure: '150ms' },
        },
      ],
    }).workloads[0]!;
    const running: string[][] = [];
    const result = await runTrials({
      experimentId: 'exp-p',
      seed: 9,
      workload: configured,
      corpus: () => stream(simpleCorpus(50)),
      arms,
      store,
      clock: systemClock,
      onTrials: (t) =>
        void running.push(...t.filter((x) => x.status === 'running' && x.details?.processes).map((x) => x.details!.processes!.map((p) => p.arm).sort())),
    });
    expect(result.completed).toBe(1);
    const outcomes: RequestOutcome[] = await collect(store.outcomes.read('exp-p'));
    const prime = outcomes.filter((o) => o.arm === 'control-prime');
    expect(prime.length).toBeGreaterThan(0);
    // It ran control's revision under its own name, outside the crossover's slots.
    expect(JSON.parse(Buffer.from(prime[0]!.body!, 'base64').toString('utf8'))).toEqual({ arm: 'control-prime', slot: '', revision: 'abc' });
    // While the trial ran, its processes were recorded with it, control′ too (a killed run's next run stops them).
    expect(running).toContainEqual(['control', 'control-prime', 'treatment']);
  });

  it("starts each trial's arms during the previous trial's warm-up when the workload prestarts, records them there, and stops those no trial took", async () => {
    const store = await tempStore();
    const spec = { command: `${process.execPath} --import tsx ${ARM_SERVER} {revision}`, readyPath: '/healthz', readyTimeoutMs: 20_000, cwd: process.cwd() };
    const cpus = pinning();
    const arms = new DeployedArms({ specs: { control: spec, treatment: spec }, revisions: { control: 'abc', treatment: 'def' }, ...cpus, clock: systemClock });
    const controlStarted = new Map<number, number>();
    const snapshots: TrialRecord[][] = [];
    // Decided after 2 trials of at most 4: the arms the second trial started for the third are never taken.
    const result = await runTrials({
      experimentId: 'exp-early',
      seed: 5,
      // Windows long enough that a busy machine cannot make a trial miss its load (150 ms ones did, beside the bench-flags tests).
      workload: workload({ count: undefined, min: 2, max: 4, prestart: true, warmup: '100ms', measure: '1s', ...cpus }),
      corpus: () => stream(simpleCorpus(50)),
      arms,
      store,
      clock: systemClock,
      scrapeIntervalMs: 50,
      onTrials: (t) => void snapshots.push(t.map((x) => ({ ...x }))),
      afterMeasure: async (index, controlUrl) =>
        void controlStarted.set(index, ((await (await request(`${controlUrl}/placement`)).body.json()) as { startedAtMs: number }).startedAtMs),
      afterTrial: async (completed) => completed >= 2,
    });
    expect(result.completed).toBe(2);
    const [first, second] = result.trials;
    expect([first, second].map((t) => [t?.index, t?.status, t?.details?.slots])).toEqual([
      [0, 'completed', { control: 'A', treatment: 'B' }],
      [1, 'completed', { control: 'B', treatment: 'A' }],
    ]);
    // Trial 2's control was started while trial 1 ran, before trial 2's own record began.
    expect(controlStarted.get(1)).toBeGreaterThan(first!.startedAtMs);
    expect(controlStarted.get(1)).toBeLessThan(second!.startedAtMs);
    // The processes trial 1 started early are the ones trial 2 ran (its running record names them).
    const pids = (list: unknown): number[] => (list as RecordedProcess[]).map((p) => p.pid).sort();
    const secondRunning = snapshots.flat().find((t) => t.index === 1 && t.status === 'running' && t.details?.processes);
    expect(pids(first!.details?.prestarted)).toEqual(pids(secondRunning?.details?.processes));
    // Named on trial 1 while it still ran (a run killed then leaves them recorded), and kept once it settled.
    expect(snapshots.some((list) => list.some((t) => t.index === 0 && t.status === 'running' && Array.isArray(t.details?.prestarted)))).toBe(true);
    // The arms trial 2 started for trial 3 were stopped when the judge decided.
    const unused = pids(second!.details?.prestarted);
    expect(unused).toHaveLength(2);
    for (const pid of unused) expect(() => process.kill(pid, 0)).toThrow();
  });

  it("sends every trial's arms trials.prewarm requests before its warm-up, arms started early as well as those deployed for it", async () => {
    const spec = { command: `${process.execPath} --import tsx ${ARM_SERVER}`, readyPath: '/healthz', readyTimeoutMs: 20_000, cwd: process.cwd() };
    const cpus = pinning();
    for (const prestart of [false, true]) {
      const store = await tempStore();
      const arms = new DeployedArms({ specs: { control: spec, treatment: spec }, ...cpus, clock: systemClock });
      // What control had been sent by the end of each trial (the fixture counts every request but its own endpoints).
      const served = new Map<number, number>();
      const result = await runTrials({
        experimentId: `exp-warm-${prestart}`,
        seed: 4,
        // Windows long enough that a busy machine cannot leave one empty: what is counted here is what each arm was sent.
        workload: workload({ count: 3, prewarm: 7, prestart, warmup: '100ms', measure: '1s', ...cpus }, { minAchievedShare: 0.01 }),
        corpus: () => stream(simpleCorpus(50)),
        arms,
        store,
        clock: systemClock,
        scrapeIntervalMs: 50,
        afterMeasure: async (index, controlUrl) =>
          void served.set(index, Number(/arm_requests_total\{[^}]*\} (\d+)/.exec(await (await request(`${controlUrl}/metrics`)).body.text())![1])),
      });
      expect(result.completed).toBe(3);
      // Trial 0's arms are deployed for it and sent all 7 back to back; with prestart, trials 1 and 2 take arms started
      // (and warmed) during the trial before, whose prewarm ends with that trial's window, sent or not (trial-prewarm.ts).
      // Either way each trial's record says what its arms were sent before it, exactly.
      for (const t of result.trials) {
        const prewarm = t.details!.prewarm as { sent: number; errors: number };
        expect(served.get(t.index)).toBe(prewarm.sent + (t.details!.sentPairs as number));
        if (!prestart || t.index === 0) expect(prewarm).toEqual({ sent: 7, errors: 0 });
        else expect(prewarm.sent).toBeLessThanOrEqual(7);
      }
    }
  });

  it('keeps arms started early on their start CPUs while the trial before theirs runs, and moves them onto their slots when theirs begins', async () => {
    const store = await tempStore();
    const cpus = pinning();
    const [startCpu, armCpu] = [cpus.startCpus[0], cpus.slotCpus[0]];
    const spec = { command: `${process.execPath} --import tsx ${ARM_SERVER}`, readyPath: '/healthz', readyTimeoutMs: 20_000, cwd: process.cwd() };
    const arms = new DeployedArms({ specs: { control: spec, treatment: spec }, ...cpus, clock: systemClock });
    const cpusOf = (pid: number): string | undefined => /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    // Read when trial 1's record first names the arms it started for trial 2: trial 1 is still running.
    let waiting: (string | undefined)[] | undefined;
    const during = new Map<number, string[]>();
    const result = await runTrials({
      experimentId: 'exp-early-placed',
      seed: 7,
      workload: workload({ count: 2, prestart: true, ...cpus }),
      corpus: () => stream(simpleCorpus(50)),
      arms,
      store,
      clock: systemClock,
      onTrials: (t) => {
        const early = t.find((x) => x.index === 0 && x.status === 'running' && Array.isArray(x.details?.prestarted));
        if (early && waiting === undefined) waiting = (early.details!.prestarted as RecordedProcess[]).map((p) => cpusOf(p.pid));
      },
      afterMeasure: async (index, controlUrl) =>
        void during.set(index, ((await (await request(`${controlUrl}/placement`)).body.json()) as { cpus: string[] }).cpus),
    });
    expect(result.completed).toBe(2);
    expect(waiting).toEqual([startCpu, startCpu]);
    // Every thread of trial 2's control, started early, ran on the arms' CPU in its trial.
    expect(during.get(1)).toEqual([armCpu]);
  });

  it('deploys a trial afresh when the arms started early for it did not become ready', async () => {
    const store = await tempStore();
    const dir = await mkdtemp(join(tmpdir(), 'tandem-prestart-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const broken = join(dir, 'broken');
    // A build that fails while the marker exists: laid once trial 1's arms are up (before trial 2's start early),
    // lifted once an attempt at trial 1 has ended. Started after that, as without prestart, trial 2's arms would start.
    const spec = {
      command: `test -e ${broken} && exit 3; exec ${process.execPath} --import tsx ${ARM_SERVER}`,
      readyPath: '/healthz',
      readyTimeoutMs: 20_000,
      cwd: process.cwd(),
    };
    const cpus = pinning();
    const arms = new DeployedArms({ specs: { control: spec, treatment: spec }, ...cpus, clock: systemClock });
    const result = await runTrials({
      experimentId: 'exp-early-failed',
      seed: 6,
      workload: workload({ count: 2, prestart: true, ...cpus }),
      corpus: () => stream(simpleCorpus(50)),
      arms,
      store,
      clock: systemClock,
      onTrials: (t) => {
        if (t.some((x) => x.index === 0 && x.status === 'running' && x.details?.processes)) writeFileSync(broken, '');
        if (t.some((x) => x.index === 0 && x.status !== 'running')) rmSync(broken, { force: true });
      },
    });
    expect(result.completed).toBe(2);
    // (A loaded machine may replace an attempt for its load as well: only trial 2's own attempts are asserted.)
    const second = result.trials.filter((t) => t.index === 1);
    expect(second[0]).toMatchObject({ attempt: 1, status: 'replaced', reason: expect.stringMatching(/exited \(3\) before it was ready/) });
    expect(second.at(-1)?.status).toBe('completed');
    // Nothing started early for trial 2 became ready, so trial 1 names nothing.
    expect(result.trials.find((t) => t.index === 0 && t.status === 'completed')?.details).not.toHaveProperty('prestarted');
  });

  it('replaces a trial whose arm is not ready, up to the limit, then fails naming every reason', async () => {
    const store = await tempStore();
    const spec = { command: 'echo "bad build" >&2; exit 3', readyPath: '/healthz', readyTimeoutMs: 5_000 };
    const arms = new DeployedArms({ specs: { control: spec, treatment: spec }, clock: systemClock });
    const trials: unknown[] = [];
    const failure = runTrials({
      experimentId: 'exp-y',
      seed: 1,
      workload: workload({ maxReplacements: 2 }),
      corpus: () => stream(simpleCorpus(5)),
      arms,
      store,
      clock: systemClock,
      onTrials: (t) => void trials.splice(0, trials.length, ...t),
    });
    await expect(failure).rejects.toBeInstanceOf(ReplayFailedError);
    await expect(failure).rejects.toThrow(
      /more than 2 trial\(s\) failed for infrastructure reasons:\n {2}trial 1 attempt 1: control exited \(3\) before it was ready/,
    );
    // The deploy's own words are in the reason, so the error, `status` and the report show its cause.
    await expect(failure).rejects.toThrow(/before it was ready: echo "bad build" >&2; exit 3; its last output: bad build/);
    expect(trials).toEqual([1, 2, 3].map((attempt) => expect.objectContaining({ index: 0, attempt, status: 'replaced', details: { output: 'bad build\n' } })));
  });

  it('says which ready path a service without it answered, and how to set it', async () => {
    const store = await tempStore();
    const server = `node -e "require('http').createServer((q, r) => (r.statusCode = 404, r.end())).listen(+process.argv[1], '127.0.0.1')" {port}`;
    // Long enough for node to start on a loaded machine: the message needs one answer from the service.
    const spec = { command: server, readyPath: '/healthz', readyTimeoutMs: 5_000 };
    const arms = new DeployedArms({ specs: { control: spec, treatment: spec }, clock: systemClock });
    const failure = runTrials({
      experimentId: 'exp-r',
      seed: 1,
      workload: workload({ maxReplacements: 0 }),
      corpus: () => stream(simpleCorpus(5)),
      arms,
      store,
      clock: systemClock,
    });
    await expect(failure).rejects.toThrow(
      /was not ready at http:\/\/127\.0\.0\.1:\d+\/healthz within 5000 ms: .*; it answered \/healthz with 404 \(set the arm's deploy\.readyPath to a path that answers 2xx when ready\)/,
    );
  });

  it('replaces a trial whose arm refuses connections', async () => {
    const store = await tempStore();
    const up = await server((req, res) => {
      req.resume();
      res.end('ok');
    });
    const down = `http://127.0.0.1:${await freePort()}`;
    const failure = runTrials({
      experimentId: 'exp-z',
      seed: 1,
      workload: workload({ count: 1, maxReplacements: 1 }),
      corpus: () => stream(simpleCorpus(10)),
      arms: new UrlArms({ control: up, treatment: down }),
      store,
      clock: systemClock,
    });
    await expect(failure).rejects.toThrow(/treatment refused or reset more than 50% of connections/);
  });

  it('excludes a trial whose arms run in different environments, unless the workload allows it', async () => {
    const store = await tempStore();
    const plain = await server((req, res) => {
      req.resume();
      res.end('ok');
    });
    const elsewhere = await server((req, res) => {
      req.resume();
      if (req.url === FINGERPRINT_PATH) return void res.end(JSON.stringify({ ...localFingerprint(), cpuModel: 'Other CPU 9000' }));
      res.end('ok');
    });
    const arms = new UrlArms({ control: plain, treatment: elsewhere });
    const strict = runTrials({
      experimentId: 'exp-f',
      seed: 1,
      workload: workload({ count: 1, maxReplacements: 0 }),
      corpus: () => stream(simpleCorpus(5)),
      arms,
      store,
      clock: systemClock,
    });
    await expect(strict).rejects.toThrow(/arms ran in different environments \(cpuModel: .* vs Other CPU 9000\)/);
    const lenient = await runTrials({
      experimentId: 'exp-g',
      seed: 1,
      workload: workload({ count: 1, allowFingerprintMismatch: true }),
      corpus: () => stream(simpleCorpus(100)),
      arms,
      store,
      clock: systemClock,
    });
    expect(lenient.trials.map((t) => t.status)).toEqual(['completed']);
  });

  it('runs sequentially: asks the judge after each trial from min on, and stops when it has decided or at max', async () => {
    const store = await tempStore();
    const url = await server((req, res) => {
      req.resume();
      res.end('ok');
    });
    const asked: number[] = [];
    const decided = await runTrials({
      experimentId: 'exp-s',
      seed: 1,
      workload: workload({ count: undefined, min: 2, max: 6 }),
      corpus: () => stream(simpleCorpus(100)),
      arms: new UrlArms({ control: url, treatment: url }),
      store,
      clock: systemClock,
      afterTrial: async (completed) => {
        asked.push(completed);
        return completed >= 3;
      },
    });
    expect(asked).toEqual([2, 3]);
    expect(decided).toMatchObject({ completed: 3, stoppedBy: 'decided' });
    const undecided = await runTrials({
      experimentId: 'exp-t',
      seed: 1,
      workload: workload({ count: undefined, min: 2, max: 3 }),
      corpus: () => stream(simpleCorpus(100)),
      arms: new UrlArms({ control: url, treatment: url }),
      store,
      clock: systemClock,
      afterTrial: async () => false,
    });
    expect(undecided).toMatchObject({ completed: 3, stoppedBy: 'max' });
  });

  it('starts no trial once the wall-time budget is spent (injected clock)', async () => {
    const store = await tempStore();
    const url = await server((req, res) => {
      req.resume();
      res.end('ok');
    });
    // A clock whose every reading is a minute later: the budget of 90 s is spent after the first trial.
    let fakeNow = 0;
    const clock = { ...systemClock, now: () => (fakeNow += 60_000) };
    const result = await runTrials({
      experimentId: 'exp-b',
      seed: 1,
      workload: workload({ count: undefined, min: 2, max: 10, budget: '90s' }),
      corpus: () => stream(simpleCorpus(100)),
      arms: new UrlArms({ control: url, treatment: url }),
      store,
      clock,
      afterTrial: async () => false,
    });
    expect(result.stoppedBy).toBe('budget');
    expect(result.completed).toBeLessThan(10);
  });

  it('replaces a trial that missed its load, like any infrastructure failure, and fails when replacements run out', async () => {
    const store = await tempStore();
    const url = await server((req, res) => {
      req.resume();
      res.end('ok');
    });
    // Five records for 20 due pairs: the corpus runs out, the achieved rate is a quarter of the target.
    const short = runTrials({
      experimentId: 'exp-l',
      seed: 1,
      workload: workload({ count: 1, maxReplacements: 1 }, { minAchievedShare: 0.9 }),
      corpus: () => stream(simpleCorpus(5)),
      arms: new UrlArms({ control: url, treatment: url }),
      store,
      clock: systemClock,
    });
    await expect(short).rejects.toThrow(/more than 1 trial\(s\) failed for infrastructure reasons:[\s\S]*load failed: achieved [\d.]+ of 100 pairs\/s/);
  });

  it('stops between trials when cancelled, and records the cancelled trial', async () => {
    const store = await tempStore();
    const url = await server((req, res) => {
      req.resume();
      res.end('ok');
    });
    const cancel = new AbortController();
    const result = await runTrials({
      experimentId: 'exp-c',
      seed: 1,
      workload: workload({ count: 3, measure: '10s' }),
      corpus: () => stream(simpleCorpus(100_000)),
      arms: new UrlArms({ control: url, treatment: url }),
      store,
      clock: systemClock,
      onProgress: (_trial, _attempt, p) => {
        if (p.sentPairs > 5) cancel.abort(new Error('stop'));
      },
      signal: cancel.signal,
    });
    expect(result.cancelled).toBe(true);
    expect(result.trials.map((t) => t.status)).toEqual(['cancelled']);
  });

  it('is stopped by a cancel that comes while an arm is still starting', async () => {
    const store = await tempStore();
    const spec = { command: 'sleep 30', readyPath: '/healthz', readyTimeoutMs: 60_000 };
    const arms = new DeployedArms({ specs: { control: spec, treatment: spec }, clock: systemClock });
    const cancel = new AbortController();
    const running = runTrials({
      experimentId: 'exp-s',
      seed: 1,
      workload: workload(),
      corpus: () => stream(simpleCorpus(5)),
      arms,
      store,
      clock: systemClock,
      signal: cancel.signal,
    });
    // Cancel once the arm's process exists and readiness polling has begun.
    await new Promise<void>((resolve) => setImmediate(resolve));
    cancel.abort(new Error('monitor: sustained violation'));
    const result = await running;
    expect(result).toMatchObject({ cancelled: true, completed: 0 });
  });

  it('resumes an interrupted experiment: completed trials kept, the running attempt recorded as replaced, the rest run', async () => {
    const store = await tempStore();
    const url = await server((_req, res) => res.end('ok'));
    const deployed: number[] = [];
    const urlArms = new UrlArms({ control: url, treatment: url });
    const arms = { kind: 'urls' as const, deploy: (trial: number) => (deployed.push(trial), urlArms.deploy()) };
    const previous = [
      { index: 0, attempt: 1, status: 'completed' as const, startedAtMs: 1, endedAtMs: 2, details: { achievedRate: 100 } },
      { index: 1, attempt: 1, status: 'running' as const, startedAtMs: 3 },
    ];
    const result = await runTrials({
      experimentId: 'exp-r',
      seed: 1,
      workload: workload({ count: 3, maxReplacements: 0 }),
      corpus: () => stream(simpleCorpus(50)),
      arms,
      store,
      clock: systemClock,
      previous,
    });
    expect(deployed).toEqual([1, 2]);
    expect(result.completed).toBe(3);
    expect(result.trials.map((t) => [t.index, t.attempt, t.status])).toEqual([
      [0, 1, 'completed'],
      [1, 1, 'replaced'],
      [1, 2, 'completed'],
      [2, 1, 'completed'],
    ]);
    expect(result.trials[1]!.reason).toMatch(/^interrupted: the worker running this trial stopped/);
    // The interrupted attempt does not count against maxReplacements (0 here).
    expect(result.trials[0]!.details).toEqual({ achievedRate: 100 });
  });

  it('renders deploy commands through environment variables and refuses unknown placeholders', () => {
    const rendered = deployCommand('serve --port {port} --rev {revision} --as {arm} --inference {dep:prediction}', {
      port: 7,
      arm: 'control',
      revision: 'r1',
      dependencies: { prediction: 'http://127.0.0.1:9' },
    });
    expect(rendered.display).toBe('serve --port 7 --rev r1 --as control --inference http://127.0.0.1:9');
    expect(rendered.shell).toBe('serve --port "${TANDEM_PORT}" --rev "${TANDEM_REVISION}" --as "${TANDEM_ARM}" --inference "${TANDEM_DEP_PREDICTION}"');
    expect(rendered.env).toEqual({ TANDEM_PORT: '7', TANDEM_REVISION: 'r1', TANDEM_ARM: 'control', TANDEM_DEP_PREDICTION: 'http://127.0.0.1:9' });
    expect(() => deployCommand('serve {prot}', { port: 7, arm: 'control', revision: '', dependencies: {} })).toThrow(
      'deploy command has unknown placeholder {prot}',
    );
    expect(() => deployCommand('serve {dep:nope}', { port: 7, arm: 'control', revision: '', dependencies: {} })).toThrow('no dependency "nope"');
  });
});
