import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseConfig, systemClock, type TrialRecord, type WorkloadConfig } from '../../core/index.js';
import { createLocalStore, type Store } from '../../store/index.js';
import { DeployedArms, cpusOfList, leftoversOf, runTrials, type RecordedProcess } from '../../replayer/index.js';
import { allowedCpusOf, processGroupMembers } from '../../replayer/arm-placement.js';
import { simpleCorpus, stream } from '../support/corpus.js';

const ARM_SERVER = join(import.meta.dirname, 'fixtures', 'arm-server.ts');
const allowed = cpusOfList(/^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '');
// The arms on one CPU this process may use, the next trial's started on another: two CPUs are needed.
const [prestartCpu, slotCpu] = allowed.length >= 2 ? [String(allowed[0]), String(allowed[allowed.length - 1])] : ['', ''];

async function tempStore(): Promise<Store> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-ahead-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return createLocalStore({ dir });
}

// Load is not what these tests are about: a busy machine's tsx-started arms answer slowly at first.
function workload(trials: Record<string, unknown>): WorkloadConfig {
  return parseConfig({
    workloads: [{ name: 'w', tier: 'svc', replay: { rate: 100, concurrency: 16, timeout: '2s', minAchievedShare: 0.001 }, trials: { warmup: '300ms', measure: '400ms', maxReplacements: 2, slotCpus: [slotCpu, slotCpu], prestartCpus: prestartCpu, ...trials } }],
  }).workloads[0]!;
}

const spec = (command = `${process.execPath} --import tsx ${ARM_SERVER} {revision}`) => ({ command, readyPath: '/healthz', readyTimeoutMs: 20_000, cwd: process.cwd() });

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

interface Placement {
  readonly trial: number;
  readonly pid: number;
  readonly startedAtMs: number;
  readonly cpus: string[];
}

describe.skipIf(allowed.length < 2)('arms started ahead of their trial (trials.prestartCpus)', () => {
  it("starts the next trial's arms on the prestart CPUs while a trial runs, and moves them onto their slot's CPUs for their own trial", async () => {
    const store = await tempStore();
    const arms = new DeployedArms({ specs: { control: spec(), treatment: spec() }, slotCpus: [slotCpu, slotCpu], prestartCpus: prestartCpu, clock: systemClock });
    const placements: Placement[] = [];
    let records: readonly TrialRecord[] = [];
    const result = await runTrials({
      experimentId: 'exp-ahead',
      seed: 4,
      workload: workload({ count: 3 }),
      corpus: () => stream(simpleCorpus(50)),
      arms,
      store,
      clock: systemClock,
      onTrials: (t) => void (records = [...t]),
      // While the trial's arms still run: where control runs, and since when.
      afterMeasure: async (index, controlUrl) => {
        const response = await request(`${controlUrl}/placement`);
        placements.push({ trial: index, ...((await response.body.json()) as Omit<Placement, 'trial'>) });
      },
    });
    expect(result.completed).toBe(3);
    expect(records.filter((t) => t.status !== 'completed').map((t) => t.reason)).toEqual([]);
    const started = (index: number): number => records.find((t) => t.index === index && t.status === 'completed')!.startedAtMs;
    // Every trial measured its arms on their slot's CPU, every thread of them.
    expect(placements.map((p) => [p.trial, p.cpus])).toEqual([0, 1, 2].map((trial) => [trial, [slotCpu]]));
    // The first trial started its own arms; the next two ran the ones the trial before them started, recorded
    // with it (a killed run's next run stops them); the last trial started none.
    const prestarted = (index: number): RecordedProcess[] => (records.find((t) => t.index === index)?.details?.prestarted as RecordedProcess[] | undefined) ?? [];
    expect(placements[0]!.startedAtMs).toBeGreaterThanOrEqual(started(0));
    for (const trial of [1, 2]) {
      expect(prestarted(trial - 1).map((p) => p.arm).sort()).toEqual(['control', 'treatment']);
      expect(prestarted(trial - 1).find((p) => p.arm === 'control')!.pid).toBe(placements[trial]!.pid);
    }
    expect(prestarted(2)).toEqual([]);
    expect([...prestarted(0), ...prestarted(1)].some((p) => alive(p.pid))).toBe(false);
  });

  it('stops the arms started ahead when the judge decides before their trial', async () => {
    const store = await tempStore();
    const arms = new DeployedArms({ specs: { control: spec(), treatment: spec() }, slotCpus: [slotCpu, slotCpu], prestartCpus: prestartCpu, clock: systemClock });
    let records: readonly TrialRecord[] = [];
    const result = await runTrials({ experimentId: 'exp-decided', seed: 5, workload: workload({ min: 2, max: 6 }), corpus: () => stream(simpleCorpus(50)), arms, store, clock: systemClock, onTrials: (t) => void (records = [...t]), afterTrial: async () => true });
    expect(result).toMatchObject({ completed: 2, stoppedBy: 'decided' });
    // Trial 2's arms were started during trial 1 and never used: stopped with the run. Until then they were
    // leftovers of trial 1's settled record, as trial 1's arms (started during trial 0) had been of trial 0's.
    const unused = records.find((t) => t.index === 1)!.details!.prestarted as RecordedProcess[];
    expect(unused.map((p) => p.arm).sort()).toEqual(['control', 'treatment']);
    expect(leftoversOf(records)).toEqual(expect.arrayContaining(unused));
    expect(leftoversOf(records).some((p) => alive(p.pid))).toBe(false);
  });

  it("moves every process of an arm's group, a compound command's children too, and says when an arm exited while it waited", async () => {
    const compound = spec(`sleep 30 & exec ${process.execPath} --import tsx ${ARM_SERVER} {revision}`);
    const arms = new DeployedArms({ specs: { control: compound, treatment: compound }, slotCpus: [slotCpu, slotCpu], prestartCpus: prestartCpu, clock: systemClock });
    const deployed = await arms.deploy(0, undefined, 'prestart');
    onTestFinished(async () => void (await Promise.all([deployed.control.stop(), deployed.treatment.stop()])));
    const members = processGroupMembers(deployed.control.pid!);
    expect(members.length).toBe(2);
    for (const pid of members) expect(await allowedCpusOf(pid)).toEqual([prestartCpu]);
    await arms.place(deployed);
    for (const pid of members) expect(await allowedCpusOf(pid)).toEqual([slotCpu]);
    // One process per arm, so its stop has reaped all of it: the arm is gone when it is to be moved.
    const simple = new DeployedArms({ specs: { control: spec(), treatment: spec() }, slotCpus: [slotCpu, slotCpu], prestartCpus: prestartCpu, clock: systemClock });
    const waited = await simple.deploy(1, undefined, 'prestart');
    onTestFinished(async () => void (await Promise.all([waited.control.stop(), waited.treatment.stop()])));
    await waited.treatment.stop();
    await expect(simple.place(waited)).rejects.toThrow(/treatment exited while it waited for its trial \(started ahead on CPUs/);
  });
});

describe('trials.prestartCpus in the config', () => {
  it('needs slotCpus and must not share a CPU with them', () => {
    const parse = (trials: Record<string, unknown>) => () => parseConfig({ workloads: [{ name: 'w', tier: 'svc', trials }] });
    expect(parse({ prestartCpus: '0' })).toThrow(/prestartCpus needs slotCpus/);
    expect(parse({ slotCpus: ['1', '1-2'], prestartCpus: '0,2' })).toThrow(/must not include the arms' slotCpus \(2 in both\)/);
    expect(parse({ slotCpus: ['1', '1'], prestartCpus: 'all' })).toThrow(/CPU list like/);
    expect(parseConfig({ workloads: [{ name: 'w', tier: 'svc', trials: { slotCpus: ['1', '1'], prestartCpus: '0' } }] }).workloads[0]!.trials.prestartCpus).toBe('0');
  });
});
