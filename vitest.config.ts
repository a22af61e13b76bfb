import { defineConfig } from 'vitest/config';
import { DEMO, E2E, INTEGRATION, LATTICE } from './vitest.layers.js';

export default defineConfig({
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // No retries: a test that passes only on a second try is a flaky test, and a flaky test is a bug.
    retry: 0,
    // Two cores: one worker for tests, the other for the servers they start.
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...INTEGRATION, ...E2E, ...LATTICE, DEMO] } },
      { extends: true, test: { name: 'integration', include: INTEGRATION, globalSetup: ['test/setup/services.ts'] } },
      { extends: true, test: { name: 'e2e', include: E2E, globalSetup: ['test/setup/services.ts'] } },
      // Groups of their own, each run after the ones before have finished (groups run in order).
      { extends: true, test: { name: 'lattice', include: LATTICE, fileParallelism: false, sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: 'demo', include: [DEMO], globalSetup: ['test/setup/services.ts'], sequence: { groupOrder: 2 } } },
    ],
  },
});
