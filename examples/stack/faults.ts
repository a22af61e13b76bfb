/**
 * Faults a deployment of the example stack can carry, so a treatment build
 * can be made to regress in the ways FIRE and HiLO describe. Given as options
 * or as `STACK_FAULTS="latency=5,malformed-tensor=rank-video,latent-timeout,error-rate=0.02"`.
 */
// Value imports from core's leaf files, not its index: each example service process would otherwise load the config schema (zod, yaml) at start-up.
import { InputError } from '../../core/errors.js';

export interface StackFaults {
  /** Extra CPU work in ranking, in percent of its own work (results unchanged). */
  readonly latencyPercent?: number;
  /** Model config for which ranking collapses the batch dimension (FIRE §3.2). */
  readonly malformedTensorModel?: string;
  /** Ranking's timeout path leaves feature extraction running on freed state (FIRE §3.1). */
  readonly latentTimeout?: boolean;
  /** Share of ranking requests answered 500, chosen by a hash of the request. */
  readonly errorRate?: number;
}

export const DEFAULT_MALFORMED_MODEL = 'rank-video';

export function parseFaults(text: string | undefined): StackFaults {
  const faults: { -readonly [K in keyof StackFaults]: StackFaults[K] } = {};
  if (!text) return faults;
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const [name, value] = part.split('=', 2).map((s) => s.trim()) as [string, string | undefined];
    const number = (min: number, max: number): number => {
      const n = Number(value);
      if (value === undefined || !Number.isFinite(n) || n < min || n > max) {
        throw new InputError(`fault "${name}" needs a number in [${min}, ${max}], got ${JSON.stringify(value ?? '')} (in "${text}")`);
      }
      return n;
    };
    switch (name) {
      case 'latency':
        faults.latencyPercent = number(0, 10_000);
        break;
      case 'malformed-tensor':
        faults.malformedTensorModel = value ?? DEFAULT_MALFORMED_MODEL;
        break;
      case 'latent-timeout':
        faults.latentTimeout = true;
        break;
      case 'error-rate':
        faults.errorRate = number(0, 1);
        break;
      default:
        throw new InputError(`unknown fault "${name}" in "${text}" (known: latency=PCT, malformed-tensor[=MODEL], latent-timeout, error-rate=SHARE)`);
    }
  }
  return faults;
}

export function formatFaults(faults: StackFaults): string {
  const parts: string[] = [];
  if (faults.latencyPercent !== undefined) parts.push(`latency=${faults.latencyPercent}`);
  if (faults.malformedTensorModel !== undefined) parts.push(`malformed-tensor=${faults.malformedTensorModel}`);
  if (faults.latentTimeout) parts.push('latent-timeout');
  if (faults.errorRate !== undefined) parts.push(`error-rate=${faults.errorRate}`);
  return parts.join(',');
}
