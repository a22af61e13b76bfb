/**
 * Worker thread entry: simulates one law of the looks (harness/judge/sequential.ts) and posts it back, its arrays
 * transferred rather than copied (about 12 MB at 48 looks). Started by harness/judge/background-law.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { simulatedLaw, type LawKey } from './sequential.js';

const law = simulatedLaw(workerData as LawKey);
parentPort!.postMessage(
  law,
  [...law.sorted, ...law.calibrated].map((values) => values.buffer as ArrayBuffer),
);
