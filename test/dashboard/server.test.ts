import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { createLocalStore } from '../../store/index.js';
import { dashboardContract } from './dashboard-contract.js';

dashboardContract('local files', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-dashboard-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const store = createLocalStore({ dir: join(dir, '.tandem') });
  await store.init();
  return store;
});
