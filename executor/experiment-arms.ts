/**
 * The arms of an experiment: running deployments given by URL (flags or
 * request), else the workload's own (URLs or deploy commands, which reach
 * their dependencies through the router).
 */
import { UsageError, type Clock, type WorkloadConfig } from '../core/index.js';
import { DeployedArms, UrlArms, type ArmName, type ArmProvider } from '../replayer/index.js';
import type { EgressRouter } from '../guardrails/index.js';

export interface ArmChoice {
  readonly control?: string | undefined;
  readonly treatment?: string | undefined;
  readonly controlRevision?: string | undefined;
  readonly treatmentRevision?: string | undefined;
}

export function httpUrl(text: string, flag: string): string {
  try {
    const url = new URL(text);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href.replace(/\/$/, '');
  } catch {
    // reported below
  }
  throw new UsageError(`${flag} must be an http:// URL, got ${JSON.stringify(text)}`);
}

/** Arms from the given URLs, else from the workload; deployed arms reach their dependencies through the router. */
export function armsFor(workload: WorkloadConfig, options: ArmChoice, router: EgressRouter | undefined, clock: Clock): ArmProvider {
  if ((options.control === undefined) !== (options.treatment === undefined)) throw new UsageError('give both --control and --treatment, or neither');
  if (options.control !== undefined && options.treatment !== undefined)
    return new UrlArms({ control: httpUrl(options.control, '--control'), treatment: httpUrl(options.treatment, '--treatment') });
  const arms = workload.arms;
  if (!arms) throw new UsageError(`workload ${workload.name} declares no arms: pass --control URL --treatment URL`);
  if (arms.control.url !== undefined && arms.treatment.url !== undefined)
    return new UrlArms({ control: arms.control.url.replace(/\/$/, ''), treatment: arms.treatment.url.replace(/\/$/, '') });
  if (!arms.control.deploy || !arms.treatment.deploy) throw new UsageError(`workload ${workload.name}: both arms must be URLs or both deploy commands`);
  const dependencyEnv: Record<string, string> = {};
  for (const dependency of workload.dependencies) if (dependency.env) dependencyEnv[dependency.name] = dependency.env;
  const spec = (arm: ArmName) => {
    const deploy = arms[arm].deploy!;
    return {
      command: deploy.command,
      env: deploy.env,
      readyPath: deploy.readyPath,
      readyProbe: deploy.readyProbe,
      readyTimeoutMs: deploy.readyTimeout,
      ...(deploy.cwd ? { cwd: deploy.cwd } : {}),
    };
  };
  return new DeployedArms({
    specs: { control: spec('control'), treatment: spec('treatment') },
    revisions: {
      ...(options.controlRevision ? { control: options.controlRevision } : {}),
      ...(options.treatmentRevision ? { treatment: options.treatmentRevision } : {}),
    },
    ...(router ? { dependencies: router.urls } : {}),
    ...(arms.controlPrime?.deployed ? { controlPrime: router ? { dependencies: router.urls['control-prime'] } : {} } : {}),
    dependencyEnv,
    processes: workload.trials.processes,
    ...(workload.trials.slotCpus ? { slotCpus: [workload.trials.slotCpus[0]!, workload.trials.slotCpus[1]!] as const } : {}),
    ...(workload.trials.startCpus ? { startCpus: [workload.trials.startCpus[0]!, workload.trials.startCpus[1]!] as const } : {}),
    clock,
  });
}

/** The workload with its treatment replaced by its control: an A/A pair. */
export function controlAgainstControl(workload: WorkloadConfig): WorkloadConfig {
  return workload.arms ? { ...workload, arms: { control: workload.arms.control, treatment: workload.arms.control } } : workload;
}
