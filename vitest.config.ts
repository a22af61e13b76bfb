import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/services.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: one worker for tests, the other for the servers they start.
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
  },
});
