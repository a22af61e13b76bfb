/**
 * The next trial's arms, started while the current trial warms up (`trials.prestartCpus`): a trial then costs
 * its warm-up and measurement, not also starting two fresh processes one after the other (about a second a
 * trial for the example's ranking service, 0.53 s of CPU each; a JVM service takes far longer). They start on
 * CPUs the measured arms do not use, sit idle until their trial, and are moved onto their slots' CPUs when it
 * begins (DeployedArms.place): still fresh processes, one per arm and trial, in the slot's start order.
 */
import { ArmNotReadyError, type ArmDeployment, type ArmProvider } from './arms.js';
import type { ArmName } from './schedule.js';

type Started = { readonly arms: Record<ArmName, ArmDeployment> } | { readonly error: unknown };

export class ArmsAhead {
  #next: { readonly index: number; readonly started: Promise<Started> } | undefined;

  constructor(
    readonly provider: ArmProvider,
    readonly signal?: AbortSignal,
  ) {}

  /** Start trial `index`'s arms, unless some are already started ahead (they wait for their own trial). */
  start(index: number, onStarted?: (arms: Record<ArmName, ArmDeployment>) => Promise<void>): void {
    if (this.#next !== undefined || !this.provider.prestarts) return;
    const started = this.provider.deploy(index, this.signal, 'prestart').then(
      async (arms): Promise<Started> => {
        try {
          await onStarted?.(arms);
        } catch (error) {
          await stopAll(arms);
          return { error };
        }
        return { arms };
      },
      (error: unknown): Started => ({ error }),
    );
    this.#next = { index, started };
  }

  /**
   * Trial `index`'s arms if they were started ahead, moved onto their slots' CPUs; undefined if none were.
   * Their start's failure is this attempt's: an ArmNotReadyError replaces the trial like any arm not ready.
   * Arms started for a later trial wait for it (this attempt replaces a failed one); arms for an earlier one
   * (a run that resumed past it) are stopped.
   */
  async take(index: number): Promise<Record<ArmName, ArmDeployment> | undefined> {
    const next = this.#next;
    if (next === undefined || next.index > index) return undefined;
    this.#next = undefined;
    const started = await next.started;
    if ('error' in started) {
      if (next.index === index) throw started.error;
      return undefined;
    }
    if (next.index < index) {
      await stopAll(started.arms);
      return undefined;
    }
    try {
      await this.provider.place?.(started.arms);
    } catch (error) {
      await stopAll(started.arms);
      throw error instanceof ArmNotReadyError ? error : new ArmNotReadyError('control', `arms started ahead could not be moved onto their slots' CPUs: ${(error as Error).message}`, '');
    }
    return started.arms;
  }

  /** Arms started ahead that no trial will use (the judge decided, the last trial ran, the run was cancelled). */
  async discard(): Promise<void> {
    const next = this.#next;
    this.#next = undefined;
    const started = await next?.started;
    if (started && 'arms' in started) await stopAll(started.arms);
  }
}

const stopAll = (arms: Record<ArmName, ArmDeployment>): Promise<unknown> => Promise.all([arms.control.stop(), arms.treatment.stop()]);
