import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';
import { join } from 'node:path';
import { boundaryViolation } from '../../eslint/import-boundaries.js';

describe('the architecture as an import rule', () => {
  it('core/ imports nothing of ours and store/ only core/', () => {
    expect(boundaryViolation('core/config/schema.ts', 'core/duration.ts', [])).toBeUndefined();
    expect(boundaryViolation('core/errors.ts', 'store/index.ts', [])).toMatch(/core\/ imports nothing of ours/);
    expect(boundaryViolation('store/local-store.ts', 'core/index.ts', [])).toBeUndefined();
    expect(boundaryViolation('store/local-store.ts', 'harness/index.ts', [])).toMatch(/store\/ knows no feature/);
    expect(boundaryViolation('net/h2-limits.ts', 'recorder/index.ts', [])).toMatch(/net\/ is the transport every feature shares/);
    expect(boundaryViolation('net/h2-limits.ts', 'core/index.ts', [])).toBeUndefined();
    expect(boundaryViolation('recorder/h2-sidecar.ts', 'net/index.ts', [])).toBeUndefined();
  });

  it('encodes the whole folder order: data flows one way, and no folder imports one after it (issue 70, finding 8)', () => {
    for (const [from, to] of [
      ['recorder/recorder.ts', 'harness/index.ts'],
      ['replayer/trials.ts', 'executor/index.ts'],
      ['harness/judge/verdict.ts', 'executor/index.ts'],
      ['guardrails/router.ts', 'store/index.ts'],
      ['dashboard/server.ts', 'cli/main.ts'],
      ['executor/run-experiment.ts', 'dashboard/server.ts'],
    ])
      expect(boundaryViolation(from!, to!, []), `${from} → ${to}`).toMatch(/data flows one way/);
    for (const [from, to] of [
      ['executor/replay-experiment.ts', 'recorder/index.ts'],
      ['harness/checks/checks.ts', 'guardrails/index.ts'],
      ['dashboard/server.ts', 'executor/index.ts'],
      ['cli/commands/serve.ts', 'dashboard/index.ts'],
    ])
      expect(boundaryViolation(from!, to!, []), `${from} → ${to}`).toBeUndefined();
  });

  it('only cli/ composes backends', () => {
    expect(boundaryViolation('cli/commands/run.ts', 'store/index.ts', ['createStore'])).toBeUndefined();
    expect(boundaryViolation('executor/run-experiment.ts', 'store/index.ts', ['createStore'])).toMatch(/only cli\/ composes backends \(createStore/);
    expect(boundaryViolation('harness/checks/evaluate.ts', 'store/clickhouse-store.ts', [])).toMatch(/only cli\/ composes backends/);
    expect(boundaryViolation('dashboard/server.ts', 'executor/index.ts', ['BullMqQueue'])).toMatch(/only cli\/ composes backends/);
    expect(boundaryViolation('executor/index.ts', 'executor/bullmq-queue.ts', ['BullMqQueue'])).toBeUndefined();
    expect(boundaryViolation('harness/checks/evaluate.ts', 'store/index.ts', ['Store'])).toBeUndefined();
  });

  it('nothing imports bench/ or test/, and the product never imports examples/', () => {
    expect(boundaryViolation('harness/judge/verdict.ts', 'bench/support/median.ts', [])).toMatch(/nothing imports bench/);
    expect(boundaryViolation('examples/demo/run-demo.ts', 'bench/run.ts', [])).toMatch(/nothing imports bench/);
    expect(boundaryViolation('lattice/controller.ts', 'examples/stack/index.ts', [])).toMatch(/never imports examples/);
    expect(boundaryViolation('cli/commands/run.ts', 'examples/stack/index.ts', [])).toMatch(/only the demo and example-stack/);
    expect(boundaryViolation('cli/commands/demo.ts', 'examples/demo/run-demo.ts', [])).toBeUndefined();
    expect(boundaryViolation('harness/judge/verdict.ts', 'test/support/cli.ts', [])).toMatch(/nothing imports test/);
    expect(boundaryViolation('bench/executor.bench.ts', 'test/support/private-services.ts', [])).toBeUndefined();
  });

  it('keeps harness/ in rooms: the judge reads metrics, never reports; only reports present', () => {
    expect(boundaryViolation('harness/judge/verdict.ts', 'harness/metrics/trial-metrics.ts', [])).toBeUndefined();
    expect(boundaryViolation('harness/judge/verdict.ts', 'harness/stats.ts', [])).toBeUndefined();
    expect(boundaryViolation('harness/judge/verdict.ts', 'harness/wording.ts', [])).toBeUndefined();
    expect(boundaryViolation('harness/judge/verdict.ts', 'harness/reports/headline.ts', [])).toMatch(
      /harness\/judge\/ may import metrics\/ and harness\/'s shared files, not harness\/reports\//,
    );
    expect(boundaryViolation('harness/metrics/trial-metrics.ts', 'harness/judge/verdict.ts', [])).toMatch(/harness\/metrics\/ may import no other room/);
    expect(boundaryViolation('harness/compare/response-diff.ts', 'harness/checks/checks.ts', [])).toMatch(/not harness\/checks\//);
    expect(boundaryViolation('harness/judge/sequential.ts', 'harness/calibration/calibration.ts', [])).toMatch(/not harness\/calibration\//);
    expect(boundaryViolation('harness/checks/evaluate.ts', 'harness/compare/compare-responses.ts', [])).toBeUndefined();
    expect(boundaryViolation('harness/reports/html-report.ts', 'harness/checks/evaluate.ts', [])).toBeUndefined();
    expect(boundaryViolation('harness/reports/html-report.ts', 'harness/index.ts', [])).toMatch(/not harness\/index\.ts/);
    expect(boundaryViolation('harness/index.ts', 'harness/judge/verdict.ts', [])).toBeUndefined();
  });

  it('is what `npm run lint` enforces: a relative import across a boundary fails lint', async () => {
    const eslint = new ESLint({ cwd: join(import.meta.dirname, '..', '..') });
    const [result] = await eslint.lintText("import { ExitCode } from '../cli/exit-codes.js';\nexport const code = ExitCode.ok;\n", {
      filePath: join(import.meta.dirname, '..', '..', 'core', 'duration.ts'),
    });
    expect(result!.messages.map((m) => [m.ruleId, m.message])).toContainEqual([
      'tandem/import-boundaries',
      'core/ imports nothing of ours (cli/exit-codes.ts)',
    ]);
  });
});
