/** Which test files belong to which layer of the suite (vitest.config.ts runs them). */
/**
 * Layers, all run by `npm test`, each alone by `npm run test:<layer>`:
 *   unit         no child process and no private ClickHouse or Redis (test/lint/test-layers.test.ts holds it): fake
 *                clocks, in-memory or temp-file inputs, at most servers in the test's own process on port 0;
 *   integration  real ClickHouse and Redis (test/setup/services.ts), servers on port 0, child processes;
 *   e2e          the CLI as a user runs it: `tandem` commands end to end, the tutorial;
 *   demo         `tandem demo`, alone, after everything else: its judged steps measure CPU per request of
 *                freshly started arms, and other test files' processes on the same two cores made a clean
 *                change undecidable within ±2.5% in 32 trials (a machine busy with unrelated work is fine).
 *   lattice      the example stack's lattice stories, one file at a time, before the demo: the capacity test's
 *                ranking answers within a 400 ms deadline or not at all, and `lattice validate` replays deployed
 *                arms and measures their CPU per request. With one core busy and other test files' stacks on
 *                the other, a coordinated capacity run had buckets with every request unanswered, and a
 *                `lattice validate` run printed no result; alone on the same busy machine each passed 3 of 3.
 * A test file is a unit test unless it is listed below.
 */
export const INTEGRATION = [
  'test/cli/compiled-build.test.ts',
  'test/dashboard/server-clickhouse.test.ts',
  'test/examples/stack.test.ts',
  'test/examples/prediction-grpc.test.ts',
  'test/examples/scorer.test.ts',
  'test/executor/bullmq.test.ts',
  'test/executor/redis-down.test.ts',
  'test/examples/service-main.test.ts',
  'test/executor/run-experiment.test.ts',
  'test/guardrails/detectors.test.ts',
  'test/guardrails/router.test.ts',
  'test/guardrails/grpc-router.test.ts',
  'test/guardrails/grpc-health.test.ts',
  'test/harness/compare-decoded.test.ts',
  'test/harness/grpc-compare.test.ts',
  'test/harness/fuzz.test.ts',
  'test/hostile/bench-flags.test.ts',
  'test/hostile/corpus-integrity.test.ts',
  'test/hostile/deploy-injection.test.ts',
  'test/hostile/recorder-production.test.ts',
  'test/hostile/router.test.ts',
  'test/recorder/in-process.test.ts',
  'test/recorder/sidecar.test.ts',
  'test/recorder/grpc-sidecar.test.ts',
  'test/recorder/grpc-call-schema.test.ts',
  'test/recorder/edge-mirror.test.ts',
  'test/replayer/**/*.test.ts',
  'test/store/clickhouse-store.test.ts',
  'test/store/local-store.test.ts',
  'test/store/sql.test.ts',
  'test/triggers/config-reads.test.ts',
];
export const E2E = [
  'test/cli/cli.test.ts',
  'test/cli/example-stack.test.ts',
  'test/cli/record-corpus.test.ts',
  'test/cli/demo-interrupt.test.ts',
  'test/cli/collect.test.ts',
  'test/cli/replay.test.ts',
  'test/cli/report.test.ts',
  'test/dashboard/browser.test.ts',
  'test/e2e/**/*.test.ts',
  'test/hostile/bad-input.test.ts',
  'test/triggers/affected.test.ts',
  'test/triggers/monorepo.test.ts',
  'test/triggers/bisect.test.ts',
];

export const LATTICE = ['test/lattice/capacity-test.test.ts', 'test/lattice/lattice.test.ts'];
export const DEMO = 'test/cli/demo.test.ts';

/** The layer a test file (a path from the repository's root) belongs to. */
export function layerOf(file: string): 'unit' | 'integration' | 'e2e' | 'lattice' | 'demo' {
  const matches = (pattern: string): boolean =>
    pattern.endsWith('/**/*.test.ts') ? file.startsWith(pattern.slice(0, -'**/*.test.ts'.length)) : file === pattern;
  if (file === DEMO) return 'demo';
  if (LATTICE.some(matches)) return 'lattice';
  if (E2E.some(matches)) return 'e2e';
  if (INTEGRATION.some(matches)) return 'integration';
  return 'unit';
}
