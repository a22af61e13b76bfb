import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import type { CorpusRecord } from '../../core/index.js';
import { createLocalStore } from '../../store/index.js';

/** A temp directory with a tandem.config.yaml of these lines and, optionally, a recorded corpus in its local store. Removed when the test ends. */
export async function tempProject(configLines: readonly string[], corpus: readonly CorpusRecord[] = [], prefix = 'tandem-project-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'tandem.config.yaml'), [...configLines, ''].join('\n'));
  if (corpus.length > 0) {
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    await store.corpus.append(corpus);
    await store.close();
  }
  return dir;
}
