/**
 * A law of the looks simulated in a worker thread while the process does something else, so the first look of
 * a design does not wait for it (3.3–4 s for looks 4..48 on two cores: the demo simulates its design's law while
 * it records, when nothing is measured). The law is the same one the first look would simulate (seeded by its
 * key), kept as if the look had.
 *
 * Why it may do nothing: a worker thread runs compiled JavaScript, and the sources run through a TypeScript
 * loader (tests, benches) have no `law-worker.js` beside this file. Then it resolves false and the first look
 * simulates the law itself, as it always could.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { WorkloadConfig } from '../../core/index.js';
import { hasLaw, keepSimulatedLaw, lawAtHand, type LawKey, type NullLaw } from './sequential.js';

const WORKER = new URL('./law-worker.js', import.meta.url);

/** Resolves true once the law is kept for this process (or already was, or was in the law cache), false where no worker can run. */
export async function simulateLawInBackground(design: LawKey): Promise<boolean> {
  if (lawAtHand(design)) return true;
  if (!existsSync(fileURLToPath(WORKER))) return false;
  const law = await new Promise<NullLaw>((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: design });
    // Not a reason to stay alive: a process that stops waiting for the law (Ctrl-C) exits without it.
    worker.unref();
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the law's worker exited (${code}) before it answered`)));
  });
  if (!hasLaw(design)) keepSimulatedLaw(design, law);
  return true;
}

/**
 * The law a workload's looks are judged on (verdict.ts): arms deployed per trial have slots; every look estimates
 * its own serial correlation unless a calibration measured a material one, which this cannot know, so it names the
 * uncalibrated law. The judge's estimator is Huber's.
 */
export function lawOfWorkload(workload: WorkloadConfig): LawKey {
  const deployed = workload.arms?.control.deploy !== undefined && workload.arms.treatment.deploy !== undefined;
  return { maxTrials: workload.trials.max, slotted: deployed, serial: 'own', estimator: 'huber' };
}
