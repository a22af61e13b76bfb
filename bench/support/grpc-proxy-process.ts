/**
 * A Tandem proxy in its own process for the gRPC benchmark, in front of one upstream:
 * `router URL` (a shared dependency, writes allowed) or `sidecar URL RATE DIR` (the recording sidecar over a
 * local store in DIR). Prints its URL and pid; a sidecar writes its accounting to DIR/accounting.json when stopped.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseConfig, systemClock } from '../../core/index.js';
import { startRouter } from '../../guardrails/index.js';
import { Recorder, startSidecar } from '../../recorder/index.js';
import { createLocalStore } from '../../store/index.js';

const [mode, upstream, rate, dir] = process.argv.slice(2);
if (mode === 'router') {
  const dependencies = parseConfig({
    workloads: [{ name: 'bench', tier: 'bench', dependencies: [{ name: 'upstream', policy: 'shared', target: upstream!, writes: 'allow' }] }],
  }).workloads[0]!.dependencies;
  const router = await startRouter({ experimentId: 'bench', seed: 1, dependencies, arms: ['treatment'] });
  process.stdout.write(`${JSON.stringify({ url: router.urls.treatment.upstream, pid: process.pid })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => void router.close().then(() => process.exit(0)));
} else {
  const store = createLocalStore({ dir: dir! });
  await store.init();
  const recorder = new Recorder({ tier: 'bench', store: store.corpus, clock: systemClock, rate: Number(rate), log: () => undefined });
  const sidecar = await startSidecar({ recorder, upstream: upstream! });
  process.stdout.write(`${JSON.stringify({ url: sidecar.url, pid: process.pid })}\n`);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      await sidecar.close();
      await writeFile(join(dir!, 'accounting.json'), JSON.stringify(recorder.accounting));
      process.exit(0);
    })();
  };
  process.stdin.resume();
  process.stdin.on('end', stop);
  process.on('SIGINT', stop);
}
if (mode === 'router') process.on('SIGINT', () => process.exit(0));
