#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so `npx tandem` works straight after `npm ci` with no build step.
import { setFlagsFromString } from 'node:v8';
import { register } from 'tsx/esm/api';

// V8 pretenures allocation sites whose objects survived start-up (module loading makes many long-lived
// objects). Per-request objects of a proxy allocated at those sites then land in old space, keep the
// young objects they point to alive until a full collection, and every scavenge promotes megabytes of
// garbage: with it on, the recording sidecar's scavenges took 5 ms instead of 1 ms and promoted 1.7 MB
// instead of 10 kB (measured with --trace-gc-nvp; the recorder-soak bench shows the throughput).
// Set before anything else loads, so no start-up decision is made with it on.
setFlagsFromString('--no-allocation-site-pretenuring');

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv);
