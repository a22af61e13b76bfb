/**
 * Never run what an input says (issue 18): revisions from `replay` and
 * `calibrate` reached `sh -c` unchecked; and whatever a value holds, the shell
 * must expand it as one word, never parse it.
 */
import { spawnSync } from 'node:child_process';
import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalStore } from '../../store/index.js';
import { deployCommand } from '../../replayer/index.js';
import { tempDir } from '../support/temp-dir.js';
import { rankingCorpus } from '../support/corpus.js';
import { runCli } from '../support/cli.js';

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

async function deployProject(): Promise<string> {
  const dir = await tempDir();
  const arm = "{ deploy: { command: 'echo {revision} > /dev/null; exit 1', readyTimeout: 1s } }";
  await writeFile(
    join(dir, 'tandem.config.yaml'),
    [
      'workloads:',
      '  - name: w',
      '    tier: ranking',
      `    arms: { control: ${arm}, treatment: ${arm} }`,
      '    trials: { count: 1, warmup: 100ms, measure: 100ms }',
      '',
    ].join('\n'),
  );
  const store = createLocalStore({ dir: join(dir, '.tandem') });
  await store.corpus.append(rankingCorpus(5));
  return dir;
}

describe('revisions never reach a shell as code', () => {
  it.each([
    ['replay', '--treatment-revision'],
    ['replay', '--control-revision'],
    ['calibrate', '--control-revision'],
  ])('tandem %s %s "x; touch F; #" is bad input, and F is never created', async (command, flag) => {
    const dir = await deployProject();
    const marker = join(dir, 'F');
    const result = await runCli([command, '--workload', 'w', flag, `x; touch ${marker}; #`], { cwd: dir });
    expect(result.code, result.err).toBe(3);
    expect(result.err).toContain('revision "x; touch');
    expect(result.err).toContain('is not a git revision or build label');
    expect(await exists(marker)).toBe(false);
  });

  it('a substituted value is one word to the shell, inside or outside quotes', async () => {
    const dir = await tempDir();
    const marker = join(dir, 'G');
    const hostile = `$(touch ${marker})\`touch ${marker}\`;touch ${marker} "'`;
    for (const template of ['printf %s {dep:db}', 'printf %s "{dep:db}"', "printf %s '{dep:db}'", 'printf %s x{dep:db}y']) {
      const { shell, env } = deployCommand(template, { port: 1, arm: 'control', revision: '', dependencies: { db: hostile } });
      const run = spawnSync('sh', ['-c', shell], { env: { ...process.env, ...env }, encoding: 'utf8' });
      expect(run.stdout, template).toBe(template.includes('x{dep:db}y') ? `x${hostile}y` : hostile);
    }
    expect(await exists(marker)).toBe(false);
  });
});
