/**
 * The two arms of an experiment: running deployments given by URL, or
 * processes started per trial from a deploy command. Deployed arms swap slots
 * from trial to trial (a crossover): the slot fixes the start order (or, with
 * `trials.startCpus`, where each starts), the port and the CPUs, so placement
 * bias can be told apart from the change.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'undici';
import { freePort, treatmentSlotSign, type Clock } from '../core/index.js';
import { grpcHealth } from '../net/index.js';
import { checkRevision, deployCommand } from './deploy-command.js';
import { armFingerprint, localFingerprint, type Fingerprint } from './fingerprint.js';
import { GroupMoveError, moveProcessGroups } from './arm-placement.js';
import type { ArmName } from './schedule.js';

/** Slot A starts first (with `trials.startCpus`, both at once, each on its own start CPUs). */
export type Slot = 'A' | 'B';

export interface ArmDeployment {
  readonly arm: ArmName;
  readonly url: string;
  readonly slot: Slot;
  readonly port?: number;
  readonly pid?: number;
  readonly fingerprint?: Fingerprint;
  /** Every process of the arm when it runs several (`trials.processes`); `url` and `pid` are the first one's. */
  readonly instances?: readonly ArmInstance[];
  /** The arm's recent output (deployed arms). */
  log(): string;
  stop(): Promise<void>;
}

/** One process of a deployed arm. */
export interface ArmInstance {
  readonly url: string;
  readonly pid?: number;
}

/** An arm's processes: its instances, or the arm itself as one. */
export const instancesOf = (d: ArmDeployment): readonly ArmInstance[] => d.instances ?? [{ url: d.url, ...(d.pid !== undefined ? { pid: d.pid } : {}) }];

/** What an arm is, for reports: the revision it was deployed from and/or the URL it answered on. */
export interface ArmIdentity {
  readonly revision?: string;
  readonly url?: string;
}

export interface ArmProvider {
  /** Processes started per trial (crossover applies), or URLs of running deployments. */
  readonly kind: 'urls' | 'deployed';
  /** A second copy of control started per trial (Diffy's control′), when the workload deploys one. */
  deployControlPrime?(trial: number, signal?: AbortSignal): Promise<ArmDeployment>;
  /** What the experiment compares, said in every report's title. */
  readonly compared?: Readonly<Record<ArmName, ArmIdentity>>;
  /**
   * Trial `trial`'s arms, started and ready. `place: false` leaves arms started on their start CPUs there
   * (`trials.startCpus`), for `place` to move them onto their slots' when their trial begins.
   */
  deploy(trial: number, signal?: AbortSignal, options?: { readonly place?: boolean }): Promise<Record<ArmName, ArmDeployment>>;
  /** Moves arms deployed with `place: false` onto their slots' CPUs; an arm that is gone by then is not ready (ArmNotReadyError). */
  place?(deployments: Record<ArmName, ArmDeployment>): Promise<Record<ArmName, ArmDeployment>>;
}

/** The last lines a deployment printed, for the error that says it failed (its own words: "json-server: not found"). */
export function lastLines(output: string, lines = 3, chars = 400): string {
  const tail = output.trimEnd().split('\n').slice(-lines).join(' | ');
  if (tail === '') return '; it printed nothing';
  // Control characters from a process's output never reach a terminal through an error message.
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  const clean = tail.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
  return `; its last output: ${clean.length > chars ? `…${clean.slice(-chars)}` : clean}`;
}

/** An arm was not ready or could not be started: an infrastructure failure, so the trial is replaced. */
export class ArmNotReadyError extends Error {
  constructor(
    readonly arm: ArmName,
    message: string,
    readonly output: string,
  ) {
    super(message);
  }
}

export class UrlArms implements ArmProvider {
  readonly kind = 'urls';
  constructor(readonly urls: Readonly<Record<ArmName, string>>) {}

  get compared(): Readonly<Record<ArmName, ArmIdentity>> {
    return { control: { url: this.urls.control }, treatment: { url: this.urls.treatment } };
  }

  async deploy(): Promise<Record<ArmName, ArmDeployment>> {
    const [control, treatment] = await Promise.all([armFingerprint(this.urls.control), armFingerprint(this.urls.treatment)]);
    const deployment = (arm: ArmName, slot: Slot, fingerprint: Fingerprint | undefined): ArmDeployment => ({
      arm,
      url: this.urls[arm],
      slot,
      ...(fingerprint ? { fingerprint } : {}),
      log: () => '',
      stop: async () => undefined,
    });
    return { control: deployment('control', 'A', control), treatment: deployment('treatment', 'B', treatment) };
  }
}

export interface DeploySpec {
  /** Shell command; `{port}`, `{arm}`, `{revision}` and `{dep:NAME}` are passed as environment variables (deploy-command.ts). */
  readonly command: string;
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly readyPath: string;
  /** `grpc-health`: ready when grpc.health.v1.Health/Check answers SERVING. @default 'http' */
  readonly readyProbe?: 'http' | 'grpc-health';
  readonly readyTimeoutMs: number;
}

export interface DeployedArmsOptions {
  readonly specs: Readonly<Record<ArmName, DeploySpec>>;
  readonly revisions?: Readonly<Partial<Record<ArmName, string>>>;
  /** Dependency URLs each arm is given (the router's listeners), by dependency name. */
  readonly dependencies?: Readonly<Record<ArmName, Readonly<Record<string, string>>>>;
  /** Environment variables carrying those URLs, by dependency name (e.g. prediction → INFERENCE_URL). */
  readonly dependencyEnv?: Readonly<Record<string, string>>;
  /** CPU list per slot for `taskset -c` (slot A, slot B). */
  readonly slotCpus?: readonly [string, string];
  /** CPU list per slot where its arm starts, both arms at once, before it is moved onto its slotCpus (`trials.startCpus`). */
  readonly startCpus?: readonly [string, string];
  readonly clock: Clock;
  /** Bytes of output kept per arm. @default 65536 */
  readonly logBytes?: number;
  /** Also deploy control′ per trial: control's command and revision, the `control-prime` router listeners. */
  readonly controlPrime?: { readonly dependencies?: Readonly<Record<string, string>> };
  /** Fresh processes per arm per trial (equal for both arms); the replayer spreads the load over them. @default 1 */
  readonly processes?: number;
}

class OutputRing {
  #text = '';
  constructor(readonly limit: number) {}
  add(chunk: Buffer): void {
    this.#text = (this.#text + chunk.toString('utf8')).slice(-this.limit);
  }
  toString(): string {
    return this.#text;
  }
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = (signal: NodeJS.Signals): void => {
      try {
        process.kill(-child.pid!, signal); // the whole process group: the command may have children
      } catch {
        child.kill(signal);
      }
    };
    const timer = setTimeout(() => kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    kill('SIGTERM');
  });
}

export class DeployedArms implements ArmProvider {
  readonly kind = 'deployed';
  constructor(readonly options: DeployedArmsOptions) {
    // Started on their start CPUs, arms are moved onto their slots' (the config requires both, and so does this).
    if (options.startCpus !== undefined && options.slotCpus === undefined)
      throw new Error("startCpus needs slotCpus: arms are moved onto their slot's CPUs once started");
    for (const [arm, revision] of Object.entries(options.revisions ?? {}) as [ArmName, string][]) checkRevision(arm, revision);
  }

  get compared(): Readonly<Record<ArmName, ArmIdentity>> {
    const revisions = this.options.revisions ?? {};
    return {
      control: revisions.control !== undefined ? { revision: revisions.control } : {},
      treatment: revisions.treatment !== undefined ? { revision: revisions.treatment } : {},
    };
  }

  /** Trial k's slots in ABBA order (core/slot-order.ts): trials 0 and 3 of each four put control in slot A. */
  static slotsFor(trial: number): Record<ArmName, Slot> {
    return treatmentSlotSign(trial) === -1 ? { control: 'A', treatment: 'B' } : { control: 'B', treatment: 'A' };
  }

  async deploy(trial: number, signal?: AbortSignal, options: { readonly place?: boolean } = {}): Promise<Record<ArmName, ArmDeployment>> {
    const slots = DeployedArms.slotsFor(trial);
    const order: ArmName[] = slots.control === 'A' ? ['control', 'treatment'] : ['treatment', 'control'];
    const started: ArmDeployment[] = [];
    try {
      if (this.options.startCpus && this.options.slotCpus) {
        await this.#startTogether(order, slots, started, signal);
        if (options.place ?? true) await this.#moveOntoSlots(started, this.options.slotCpus);
      } else for (const arm of order) started.push(await this.#startArm(arm, slots[arm], signal));
    } catch (error) {
      await Promise.all(started.map((d) => d.stop()));
      throw error;
    }
    const byArm = Object.fromEntries(started.map((d) => [d.arm, d])) as Record<ArmName, ArmDeployment>;
    return byArm;
  }

  /** Arms deployed with `place: false`, moved onto their slots' CPUs now (nothing to move without startCpus). */
  async place(deployments: Record<ArmName, ArmDeployment>): Promise<Record<ArmName, ArmDeployment>> {
    if (this.options.startCpus && this.options.slotCpus) await this.#moveOntoSlots([deployments.control, deployments.treatment], this.options.slotCpus);
    return deployments;
  }

  /**
   * Both arms started at once, each on its slot's start CPUs (then moved onto its slot's CPUs, #moveOntoSlots):
   * where both slots share one CPU, starting one after the other there costs the trial two starts. Nothing
   * is measured before the trial's warm-up, which follows the move. The started ones go into `started`, for the
   * caller to stop on failure.
   */
  async #startTogether(order: readonly ArmName[], slots: Record<ArmName, Slot>, started: ArmDeployment[], signal?: AbortSignal): Promise<void> {
    const settled = await Promise.allSettled(order.map((arm) => this.#startArm(arm, slots[arm], signal)));
    for (const s of settled) if (s.status === 'fulfilled') started.push(s.value);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Every process of each arm moved onto its slot's CPUs. */
  async #moveOntoSlots(started: readonly ArmDeployment[], slotCpus: readonly [string, string]): Promise<void> {
    const moves = started.flatMap((deployment) => {
      const cpus = slotCpus[deployment.slot === 'A' ? 0 : 1];
      return instancesOf(deployment).flatMap((instance) => (instance.pid !== undefined ? [{ deployment, group: instance.pid, cpus }] : []));
    });
    // Not moved is not pinned where its slot says: the trial is replaced, like an arm that did not start.
    const moved = await moveProcessGroups(moves).catch((error: Error) => {
      const failed = moves.find((m) => error instanceof GroupMoveError && m.group === error.group) ?? moves[0]!;
      throw new ArmNotReadyError(
        failed.deployment.arm,
        `${failed.deployment.arm} could not be moved onto CPUs ${failed.cpus}: ${error.message}`,
        failed.deployment.log(),
      );
    });
    const gone = moves.find((_, i) => moved[i] === 0);
    if (gone)
      throw new ArmNotReadyError(
        gone.deployment.arm,
        `${gone.deployment.arm} exited before it could be moved onto CPUs ${gone.cpus}${lastLines(gone.deployment.log())}`,
        gone.deployment.log(),
      );
  }

  /**
   * One arm's processes, started together once the slot before it is up (the slot still fixes the start order
   * between the arms). A process that does not become ready stops the ones already started.
   */
  async #startArm(arm: ArmName, slot: Slot, signal?: AbortSignal): Promise<ArmDeployment> {
    const count = Math.max(1, this.options.processes ?? 1);
    if (count === 1) return this.#start(arm, slot, signal);
    const settled = await Promise.allSettled(Array.from({ length: count }, (_, index) => this.#start(arm, slot, signal, undefined, index)));
    const ready = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      await Promise.all(ready.map((d) => d.stop()));
      throw failed.reason;
    }
    const first = ready[0]!;
    return {
      ...first,
      instances: ready.map((d) => ({ url: d.url, ...(d.pid !== undefined ? { pid: d.pid } : {}) })),
      log: () => ready.map((d, i) => `[process ${i}] ${d.log()}`).join('\n'),
      stop: async () => void (await Promise.all(ready.map((d) => d.stop()))),
    };
  }

  /**
   * control′ for one trial: control's command and revision, its own port and router listeners, no slot
   * (it is not part of the crossover: its responses only tell noise from change, it is not measured).
   */
  async deployControlPrime(trial: number, signal?: AbortSignal): Promise<ArmDeployment> {
    if (this.options.controlPrime === undefined) throw new Error('this workload deploys no control′');
    return this.#start('control', DeployedArms.slotsFor(trial).control, signal, 'control-prime');
  }

  async #start(arm: ArmName, slot: Slot, signal?: AbortSignal, as?: 'control-prime', processIndex = 0): Promise<ArmDeployment> {
    const spec = this.options.specs[arm];
    const port = await freePort();
    const label = as ?? arm;
    const dependencies = (as !== undefined ? this.options.controlPrime?.dependencies : this.options.dependencies?.[arm]) ?? {};
    const rendered = deployCommand(spec.command, { port, arm: label, revision: this.options.revisions?.[arm] ?? '', dependencies });
    const command = rendered.display;
    const cpus = as !== undefined ? undefined : (this.options.startCpus ?? this.options.slotCpus)?.[slot === 'A' ? 0 : 1];
    const env: Record<string, string> = {
      ...process.env,
      ...spec.env,
      ...rendered.env,
      PORT: String(port),
      TANDEM_ARM: label,
      TANDEM_SLOT: as !== undefined ? '' : slot,
      TANDEM_PROCESS: String(processIndex),
    } as Record<string, string>;
    for (const [name, url] of Object.entries(dependencies)) {
      const variable = this.options.dependencyEnv?.[name];
      if (variable) env[variable] = url;
    }
    // `exec` makes a simple command the process we measure (CPU, RSS), not a shell around it;
    // a compound command keeps its shell (end it with `exec server …` to be measured). taskset runs the shell
    // (and execs it, keeping the pid), so every process of a compound command gets the slot's CPUs: in front of
    // the command it pinned only the first of them (`sleep 30 & exec server` ran the server on every CPU).
    const simple = !/[;&|\n]/.test(rendered.shell);
    const shell = ['sh', '-c', `${simple ? 'exec ' : ''}${rendered.shell}`];
    const [file, ...args] = cpus ? ['taskset', '-c', cpus, ...shell] : shell;
    const child = spawn(file!, args, { cwd: spec.cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = new OutputRing(this.options.logBytes ?? 65_536);
    child.stdout?.on('data', (chunk: Buffer) => output.add(chunk));
    child.stderr?.on('data', (chunk: Buffer) => output.add(chunk));
    const url = `http://127.0.0.1:${port}`;
    const deployment: ArmDeployment = {
      arm,
      url,
      slot,
      port,
      pid: child.pid!,
      fingerprint: localFingerprint(),
      log: () => output.toString(),
      stop: () => stopProcess(child),
    };
    const deadline = this.options.clock.monotonic() + spec.readyTimeoutMs;
    let lastAnswer: number | string | undefined;
    const grpcProbe = spec.readyProbe === 'grpc-health';
    const probed = grpcProbe ? 'grpc.health.v1.Health/Check' : spec.readyPath;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new ArmNotReadyError(
          arm,
          `${label} exited (${child.exitCode ?? child.signalCode}) before it was ready: ${command}${lastLines(output.toString())}`,
          output.toString(),
        );
      }
      if (signal?.aborted) {
        await deployment.stop();
        throw signal.reason;
      }
      try {
        if (grpcProbe) {
          const health = await grpcHealth(url, '', 1_000);
          if (health.serving) return deployment;
          lastAnswer = health.status;
        } else {
          const response = await request(`${url}${spec.readyPath}`, { headersTimeout: 1_000, bodyTimeout: 1_000 });
          await response.body.dump();
          if (response.statusCode >= 200 && response.statusCode < 300) return deployment;
          lastAnswer = response.statusCode;
        }
      } catch {
        // Not listening yet.
      }
      if (this.options.clock.monotonic() > deadline) {
        await deployment.stop();
        // A service without the ready path answers (404, say) but never "ready": say so, and where to set it.
        const fix = grpcProbe ? 'it must answer SERVING when ready' : "set the arm's deploy.readyPath to a path that answers 2xx when ready";
        const answered = lastAnswer !== undefined ? `; it answered ${probed} with ${lastAnswer} (${fix})` : '';
        throw new ArmNotReadyError(
          arm,
          `${label} was not ready at ${url}${grpcProbe ? ` (${probed})` : spec.readyPath} within ${spec.readyTimeoutMs} ms: ${command}${answered}${lastLines(output.toString())}`,
          output.toString(),
        );
      }
      await this.options.clock.sleep(50, signal).catch(() => undefined);
    }
  }
}
