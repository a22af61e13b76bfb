import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseConfig, systemClock } from '../../core/index.js';
import { DeployedArms, cpusOfList } from '../../replayer/index.js';
import { moveProcessGroups } from '../../replayer/arm-placement.js';

const ARM_SERVER = join(import.meta.dirname, 'fixtures', 'arm-server.ts');
const allowed = cpusOfList(/^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]!);

const cpusOf = (pid: string | number): string | undefined => /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];

/** The other processes of `group` (arms are started detached, as group leaders). */
function groupMembers(group: number): string[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== group)
    .filter((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === group;
      } catch {
        return false;
      }
    });
}

describe('trials.startCpus: both arms start at once, then move onto their slot', () => {
  // Two CPUs this process may use: slot A starts on the first and runs on the last, beside slot B.
  it.skipIf(allowed.length < 2)("starts slot B before slot A is ready, and moves every process of both onto the slot's CPUs", async () => {
    const [first, last] = [String(allowed[0]), String(allowed.at(-1))];
    // Slot A's server starts two seconds after its shell: started one after the other, slot B's could not start
    // before it is ready. A helper beside each server, as a wrapper script might start, is in the arm's group.
    const spec = {
      command: `sleep 30 & if [ "$TANDEM_SLOT" = A ]; then sleep 2; fi; exec ${process.execPath} --import tsx ${ARM_SERVER} {revision}`,
      readyPath: '/healthz',
      readyTimeoutMs: 20_000,
      cwd: process.cwd(),
    };
    const arms = new DeployedArms({ specs: { control: spec, treatment: spec }, slotCpus: [last, last], startCpus: [first, last], clock: systemClock });
    const deployed = await arms.deploy(0);
    onTestFinished(async () => void (await Promise.all([deployed.control.stop(), deployed.treatment.stop()])));
    expect([deployed.control.slot, deployed.treatment.slot]).toEqual(['A', 'B']);
    const placement = async (url: string): Promise<{ pid: number; startedAtMs: number; cpus: string[] }> =>
      (await (await request(`${url}/placement`)).body.json()) as { pid: number; startedAtMs: number; cpus: string[] };
    const [a, b] = await Promise.all([placement(deployed.control.url), placement(deployed.treatment.url)]);
    expect(b.startedAtMs).toBeLessThan(a.startedAtMs);
    // Slot A started on the first CPU: it and its helper were moved, every thread of them.
    expect(a).toMatchObject({ pid: deployed.control.pid, cpus: [last] });
    expect(b).toMatchObject({ pid: deployed.treatment.pid, cpus: [last] });
    for (const arm of [deployed.control, deployed.treatment]) {
      const members = groupMembers(arm.pid!);
      expect(members.length).toBeGreaterThan(0);
      expect(new Set(members.map(cpusOf))).toEqual(new Set([last]));
    }
  });

  it('moves nothing of a group that is gone, and refuses what is not a CPU list or a group', async () => {
    // A process group no process is in (pids stop well below 2^22 on Linux): nothing to move, said as 0.
    expect(await moveProcessGroups([{ group: 2 ** 30, cpus: String(allowed[0]) }])).toEqual([0]);
    await expect(moveProcessGroups([{ group: process.pid, cpus: '0;touch /tmp/x' }])).rejects.toThrow(/cannot move process group/);
    await expect(moveProcessGroups([{ group: 1, cpus: '0' }])).rejects.toThrow(/cannot move process group 1/);
    const spec = { command: 'true', readyPath: '/', readyTimeoutMs: 1_000 };
    expect(() => new DeployedArms({ specs: { control: spec, treatment: spec }, startCpus: ['0', '1'], clock: systemClock })).toThrow(
      /startCpus needs slotCpus/,
    );
  });

  it('needs slotCpus to move the arms onto, and CPU lists for both slots', () => {
    const deploy = { command: 'serve {port}' };
    const workload = (trials: Record<string, unknown>) => ({
      workloads: [{ name: 'w', tier: 'svc', arms: { control: { deploy }, treatment: { deploy } }, trials }],
    });
    expect(() => parseConfig(workload({ startCpus: ['0', '1'] }))).toThrow(/startCpus.*needs slotCpus/);
    expect(() => parseConfig(workload({ slotCpus: ['1', '1'], startCpus: ['0;rm -rf /', '1'] }))).toThrow(/startCpus.*CPU list like/);
    expect(() => parseConfig(workload({ slotCpus: ['1', '1'], startCpus: ['0'] }))).toThrow(/startCpus/);
    expect(parseConfig(workload({ slotCpus: ['1', '1'], startCpus: ['0', '1'] })).workloads[0]!.trials.startCpus).toEqual(['0', '1']);
  });
});
