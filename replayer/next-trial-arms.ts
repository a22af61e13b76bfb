/**
 * The next trial's arms, started while this trial warms up (`trials.prestart`).
 *
 * Starting two fresh processes is part of every trial of deployed arms: about half a second each for the
 * example's ranking service (the demo's trials spent a tenth of their time on it), seconds for a JVM. Started
 * during the previous trial's warm-up, where nothing is measured, that time is hidden; a trial then only takes
 * its ready arms over. The arms started early sit idle until their trial (a fresh process that has not served
 * a request is in the state the trial would have started it in) where `trials.startCpus` started them, and are
 * moved onto their slots' CPUs when their trial begins: whatever a fresh runtime still does after it is ready
 * (V8 compiles and collects on threads of its own) stays off the CPUs the running trial measures.
 *
 * With `trials.prewarm` they are warmed once ready, until the trial they were started beside ends its window
 * (endWarming), their own trial takes them, or no trial will: a trial never waits for the next one's warm-up.
 *
 * The processes are recorded with the trial that started them (`prestarted` in its details, stopped on resume
 * by leftoversOf), so a killed runner leaves none behind for good.
 */
import type { ArmDeployment, ArmProvider } from './arms.js';
import { instancesOf } from './arms.js';
import { recordProcess, type RecordedProcess } from './arm-processes.js';
import type { ArmName } from './schedule.js';

type Deployed = Record<ArmName, ArmDeployment>;
/** Warms arms started early; `trialEnded` aborts when the trial they were started beside ends its window (endWarming). */
type Warm = (deployments: Deployed, index: number, trialEnded: AbortSignal) => Promise<unknown>;

/** Every process of the deployed arms, recorded for leftoversOf (control′ with its own name). */
export function processesOf(deployments: Deployed, prime?: ArmDeployment): RecordedProcess[] {
  const arms = (['control', 'treatment'] as const).flatMap((arm) =>
    instancesOf(deployments[arm]).flatMap((i) => (i.pid !== undefined ? [recordProcess(arm, i.pid)] : [])),
  );
  return prime?.pid !== undefined ? [...arms, recordProcess('control-prime', prime.pid)] : arms;
}

export class NextTrialArms {
  #next: { index: number; deployed: Promise<Deployed>; warming: AbortController } | undefined;
  readonly #arms: ArmProvider;
  readonly #signal: AbortSignal | undefined;
  readonly #warm: Warm | undefined;

  /** `warm`: what is done with the arms once ready, before their trial takes them (`trials.prewarm`). */
  constructor(arms: ArmProvider, signal?: AbortSignal, warm?: Warm) {
    this.#arms = arms;
    this.#signal = signal;
    this.#warm = warm;
  }

  /**
   * Starts trial `index`'s arms (unless they are starting already; arms started for another trial are
   * stopped). Resolves with their processes once they are ready, or with none when they failed to start:
   * that failure is the trial's own, met when it takes them (take).
   */
  start(index: number): Promise<RecordedProcess[]> {
    if (this.#next?.index !== index) {
      void this.stop();
      const warm = this.#warm;
      const warming = new AbortController();
      const started = this.#arms.deploy(index, this.#signal, { place: false });
      // Warmed where they started, while the trial before runs; a failed warm-up stops them and fails their trial.
      const deployed =
        warm === undefined
          ? started
          : started.then(async (deployments) => {
              try {
                await warm(deployments, index, warming.signal);
              } catch (error) {
                await Promise.all([deployments.control.stop(), deployments.treatment.stop()]);
                throw error;
              }
              return deployments;
            });
      // Not awaited until the trial takes them: a failure is that trial's, never an unhandled rejection.
      deployed.catch(() => undefined);
      this.#next = { index, deployed, warming };
    }
    return this.#next.deployed.then(
      (deployments) => processesOf(deployments),
      () => [],
    );
  }

  /** The trial the arms were started beside has ended its window: their warm-up ends too, sent or not. */
  endWarming(): void {
    this.#next?.warming.abort();
  }

  /**
   * Trial `index`'s arms when they were started early, moved onto their slots' CPUs (an arm that failed to start,
   * or has exited since, fails as a deployment would; the others are stopped then), else undefined.
   */
  take(index: number): Promise<Deployed> | undefined {
    if (this.#next?.index !== index) return undefined;
    const { deployed, warming } = this.#next;
    this.#next = undefined;
    warming.abort();
    return deployed.then(async (deployments) => {
      try {
        return (await this.#arms.place?.(deployments)) ?? deployments;
      } catch (error) {
        await Promise.all([deployments.control.stop(), deployments.treatment.stop()]);
        throw error;
      }
    });
  }

  /** Stops arms started for a trial that will not run (the judge decided, the run ended or failed). */
  async stop(): Promise<void> {
    const pending = this.#next;
    this.#next = undefined;
    if (pending === undefined) return;
    // Arms no trial will take are not warmed any further.
    pending.warming.abort();
    const deployments = await pending.deployed.catch(() => undefined);
    if (deployments) await Promise.all([deployments.control.stop(), deployments.treatment.stop()]);
  }
}
