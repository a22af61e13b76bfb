import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/services.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 30_000,
    // CI runs the whole suite once on 2 cores, with end-to-end files (real processes, real
    // traffic) in parallel; one retry keeps a lost scheduling race from failing a submission.
    // A failure that repeats is still a failure, and vitest lists every retried test.
    retry: process.env.CI ? 1 : 0,
    hookTimeout: 60_000,
    // Two cores: one worker for tests, the other for the servers they start.
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
  },
});
