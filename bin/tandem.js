#!/usr/bin/env node
// Runs the CLI from compiled JavaScript (bin/compiled-build.js): built by esbuild on the first start after
// `npm ci` or after any source edit, reused otherwise. TANDEM_FROM_SOURCE=1 runs the TypeScript through tsx
// instead (what the test suite's in-process calls do anyway).
import { setFlagsFromString } from 'node:v8';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// V8 pretenures allocation sites whose objects survived start-up (module loading makes many long-lived
// objects). Per-request objects of a proxy allocated at those sites then land in old space, keep the
// young objects they point to alive until a full collection, and every scavenge promotes megabytes of
// garbage: with it on, the recording sidecar's scavenges took 5 ms instead of 1 ms and promoted 1.7 MB
// instead of 10 kB (measured with --trace-gc-nvp; the recorder-soak bench shows the throughput).
// Set before anything else loads, so no start-up decision is made with it on.
setFlagsFromString('--no-allocation-site-pretenuring');

const root = join(import.meta.dirname, '..');
let mainModule;
if (process.env.TANDEM_FROM_SOURCE === '1') {
  const { register } = await import('tsx/esm/api');
  register();
  mainModule = pathToFileURL(join(root, 'cli', 'main.ts')).href;
} else {
  const { compiledBuild, UnsafeBuildFolderError } = await import('./compiled-build.js');
  // Stack traces name the TypeScript lines (esbuild writes source maps beside the build).
  process.setSourceMapsEnabled(true);
  try {
    mainModule = pathToFileURL(join(await compiledBuild(root), 'cli', 'main.js')).href;
  } catch (error) {
    if (!(error instanceof UnsafeBuildFolderError)) throw error;
    // The CLI's own error reporting lives in the build it refused to load: said here, with its exit code (3, config-grade).
    process.stderr.write(`tandem: ${error.message}\n`);
    process.exit(3);
  }
}
const { main } = await import(mainModule);
process.exitCode = await main(process.argv);
