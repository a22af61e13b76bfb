/**
 * The environment an arm runs in. Two arms on different hardware or kernels
 * differ for reasons that are not the change, so a trial whose arms differ is
 * excluded unless the workload allows it.
 */
import { availableParallelism, cpus, hostname, release } from 'node:os';
import { request } from 'undici';

export interface Fingerprint {
  readonly cpuModel: string;
  readonly cores: number;
  readonly kernel: string;
  readonly node: string;
  readonly arch: string;
  readonly host: string;
}

/** Where an arm may describe its own environment. */
export const FINGERPRINT_PATH = '/__tandem/fingerprint';

export function localFingerprint(): Fingerprint {
  return {
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    kernel: release(),
    node: process.version,
    arch: process.arch,
    host: hostname(),
  };
}

function isFingerprint(value: unknown): value is Fingerprint {
  const v = value as Record<string, unknown> | null;
  return (
    typeof v === 'object' && v !== null && ['cpuModel', 'kernel', 'node', 'arch', 'host'].every((k) => typeof v[k] === 'string') && typeof v.cores === 'number'
  );
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/;

/**
 * The arm's fingerprint: what it reports at FINGERPRINT_PATH, else this
 * machine's when the arm is on loopback, else undefined (unknown).
 */
export async function armFingerprint(url: string): Promise<Fingerprint | undefined> {
  try {
    const response = await request(`${url}${FINGERPRINT_PATH}`, { headersTimeout: 2_000, bodyTimeout: 2_000 });
    const text = await response.body.text();
    if (response.statusCode === 200) {
      const value: unknown = JSON.parse(text);
      if (isFingerprint(value)) return value;
    }
  } catch {
    // No endpoint: fall through to what can be known.
  }
  return LOOPBACK.test(new URL(url).hostname) ? localFingerprint() : undefined;
}

/** Fields in which two fingerprints differ (empty when equal or when either is unknown). */
export function fingerprintDifferences(a: Fingerprint | undefined, b: Fingerprint | undefined): string[] {
  if (!a || !b) return [];
  return (Object.keys(a) as (keyof Fingerprint)[]).filter((key) => a[key] !== b[key]).map((key) => `${key}: ${String(a[key])} vs ${String(b[key])}`);
}
