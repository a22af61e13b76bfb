/**
 * The recorder's worker thread (record-thread.ts): builds each copied exchange into a redacted corpus record —
 * gRPC messages split and decompressed, secrets found and replaced, bodies encoded — so none of that runs on the
 * event loop that forwards production's traffic.
 */
import { constants, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { jobBuilder, type BuildJob, type BuildResult, type RecordThreadSettings } from './record-jobs.js';

// The lowest CPU priority for this thread alone (Linux's nice value is per thread): where the sidecar shares its
// core, building a record waits for production's traffic, not the other way round. Elsewhere it may not apply.
try {
  setPriority(constants.priority.PRIORITY_LOW);
} catch {
  // Not permitted or not supported: the thread runs at the process's priority.
}

const build = jobBuilder(workerData as RecordThreadSettings);

// Built records go back one at a time, each once the recorder has taken the one before (an `ack`): the recorder's
// loop then takes in one record per turn, never a pile of them between two of production's requests.
const outbox: BuildResult[] = [];
let awaitingAck = false;
const sendNext = (): void => {
  const next = outbox.shift();
  if (next === undefined) return;
  awaitingAck = true;
  parentPort!.postMessage(next);
};

parentPort!.on('message', (message: BuildJob | 'ack') => {
  if (message === 'ack') {
    awaitingAck = false;
    return sendNext();
  }
  outbox.push(build(message));
  if (!awaitingAck) sendNext();
});
